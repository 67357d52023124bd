import * as v from "valibot";
import { requireInPrefix } from "../auth.js";
import type { AppContext } from "../context.js";
import { MAX_READS_LIMIT, MAX_TTL_SECONDS, PUBLIC_ID_PATTERN } from "../domain/secret-model.js";
import { parseEnvelope } from "../client/envelope.js";
import { ApiError } from "../errors.js";
import { intRange, requiredString } from "./input.js";

/**
 * Secret keys (decisions.md section 2): 1-256 characters of
 * `A-Z a-z 0-9 . _ - ~ @ : + = /`, not starting with `/`. Scoped keys'
 * prefixes use the same rule.
 */
export const KEY_PATTERN = /^[A-Za-z0-9._~@:+=-][A-Za-z0-9._~@:+=/-]{0,255}$/;

const KEY_RULE = "key must be 1-256 characters of A-Z a-z 0-9 . _ - ~ @ : + = / and not start with /";

/** The fields every create body has (decisions.md sections 2-3). */
const commonFields = {
  value: requiredString("value"),
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
};

/** POST /secrets body (interface section 4, decisions.md sections 2-3): no `key` makes a public secret. */
export const createSecretBody = v.object({
  key: v.optional(
    v.pipe(
      requiredString("key"),
      v.regex(KEY_PATTERN, KEY_RULE),
      v.check((k) => !PUBLIC_ID_PATTERN.test(k), "key must not be 64 lower-case hex characters (reserved for public ids)"),
    ),
  ),
  ...commonFields,
});

/** Most entries in `allowed_keys`. */
export const MAX_ALLOWED_KEYS = 100;
const ALLOWED_KEYS_IDS = "allowed_keys must hold principal key ids";

/**
 * POST /orgs/:org_id/secrets body (interface section 4 "Org-scoped secrets",
 * decisions.md sections 2-5): the global fields, `key` required (any key of
 * decisions.md section 2: the 64-hex reservation is global only), `delete`
 * (default true; false seals instead of burning) and `allowed_keys`.
 */
export const createOrgSecretBody = v.object({
  key: v.pipe(requiredString("key"), v.regex(KEY_PATTERN, KEY_RULE)),
  ...commonFields,
  delete: v.optional(v.boolean("delete must be true or false")),
  allowed_keys: v.optional(
    v.pipe(
      v.array(
        v.pipe(v.string(ALLOWED_KEYS_IDS), v.regex(/^pk_[a-z2-7]{1,60}$/, ALLOWED_KEYS_IDS)),
        "allowed_keys must be an array of principal key ids",
      ),
      v.minLength(1, "allowed_keys must not be empty; omit it for org-wide access"),
      v.maxLength(MAX_ALLOWED_KEYS, `allowed_keys may hold at most ${MAX_ALLOWED_KEYS} ids`),
    ),
  ),
});

/** PATCH body, both scopes: at least one of the two (decisions.md section 4). */
export const patchSecretBody = v.object({
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
});

/**
 * Validates a secret key taken from the path: a key or a public id. For a
 * prefix-scoped key the prefix is checked first (decisions.md section 5:
 * 403 whether or not the secret exists, public ids always out of reach).
 * @throws ApiError 403 outside the caller's prefix, 400 for an invalid key.
 */
export function pathKey(c: AppContext): string {
  const key = c.req.param("key") ?? "";
  requireInPrefix(c, PUBLIC_ID_PATTERN.test(key) ? null : key);
  if (!KEY_PATTERN.test(key) && !PUBLIC_ID_PATTERN.test(key)) throw new ApiError(400, "invalid secret key");
  return key;
}

/**
 * Checks a value's size in UTF-8 bytes against VAULT_MAX_VALUE_BYTES; an
 * end-to-end envelope may be as large as the envelope of a value of that
 * size (envelopeLimit).
 * @throws ApiError 413.
 */
export function checkValueSize(value: string, maxBytes: number): void {
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > maxBytes && !(bytes <= envelopeLimit(maxBytes) && parseEnvelope(value) !== undefined)) {
    throw new ApiError(413, "value too large", { message: `the value may be at most ${maxBytes} bytes (UTF-8)` });
  }
}

/**
 * The largest end-to-end envelope (docs/share.md, "The envelope") of a value
 * of `maxBytes`: base64url of the ciphertext and its 16-byte tag, and the
 * JSON around it. An envelope is allowed up to this size, so a value of
 * VAULT_MAX_VALUE_BYTES can be shared end to end.
 */
export function envelopeLimit(maxBytes: number): number {
  return Math.ceil(((maxBytes + 16) * 4) / 3) + 256;
}

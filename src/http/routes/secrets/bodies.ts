import { randomUUID } from "node:crypto";
import * as v from "valibot";
import { FILE_META_BYTES, fileSizeOfCiphertext, parseEnvelope } from "@ephemeral-vault/client";
import { MAX_READS_LIMIT, MAX_TTL_SECONDS, PUBLIC_ID_PATTERN } from "../../../domain/secrets/model.js";
import { ApiError } from "../../errors.js";
import { MAX_BODY_BYTES } from "../declare.js";
import type { LargeBody, PrefixRule } from "../declare.js";
import { LargeBodyQueue } from "../large-body-queue.js";
import { intRange, requiredString } from "../input.js";
import { isSecretKey, KEY_CHARS, KEY_DOC, KEY_RULE } from "./secret-route.js";

/**
 * The request bodies of the secret verbs (docs/api.md "Global secrets" and
 * "Replace a secret", docs/orgs.md "Org-scoped secrets", docs/share.md "The
 * reveal proof"): the create, replace and PATCH bodies of both scopes, the
 * prefix rule on a create body's key, a public secret's reveal check and
 * the size of a value. The create body and its checks also serve the
 * anonymous links of the share page (pages/anonymous.ts).
 */

/** The fields every create body has (docs/api.md "Global secrets"). */
const commonFields = {
  value: requiredString("value"),
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
};

/** Most refused reveal proofs a sender may allow before the secret burns (docs/share.md, "The reveal proof"). */
export const MAX_FAILED_REVEALS_LIMIT = 1000;

/** A reveal check or proof: 32 bytes in base64url without padding (RFC 4648 section 5), 43 characters. */
export const PROOF_PATTERN = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/**
 * The fields of a public secret's reveal check (docs/share.md, "The reveal
 * proof"): `reveal_check`, the SHA-256 of the link's reveal proof, and
 * `max_failed_reveals`, after how many refused proofs it burns. Only without
 * `key`; `max_failed_reveals` only with `reveal_check` (checked by revealCheckOf).
 */
const revealFields = {
  reveal_check: v.optional(
    v.pipe(
      v.string("reveal_check must be a string"),
      v.regex(PROOF_PATTERN, "reveal_check must be 43 base64url characters (a SHA-256)"),
      v.description(
        "Public secrets only: SHA-256 of the link's reveal proof, base64url without padding (43 characters). POST /s/<id>/reveal then needs the proof (docs/share.md, 'The reveal proof').",
      ),
    ),
  ),
  max_failed_reveals: v.optional(
    v.pipe(
      intRange("max_failed_reveals", 1, MAX_FAILED_REVEALS_LIMIT),
      v.description("With reveal_check: the secret burns after this many refused reveal proofs. Omitted: never."),
    ),
  ),
};

/**
 * The reveal check of a create body (docs/share.md, "The reveal proof"), as
 * the lifecycle takes it.
 * @returns undefined without `reveal_check`.
 * @throws ApiError 400 for a reveal field with a `key`, or
 *   `max_failed_reveals` without `reveal_check`.
 */
export function revealCheckOf(body: { key?: string | undefined; reveal_check?: string | undefined; max_failed_reveals?: number | undefined }):
  | { checkHash: Buffer; maxFailures: number | null }
  | undefined {
  if (body.key !== undefined && (body.reveal_check !== undefined || body.max_failed_reveals !== undefined)) {
    throw new ApiError(400, "reveal_check and max_failed_reveals are for public secrets: leave out key");
  }
  if (body.reveal_check === undefined) {
    if (body.max_failed_reveals !== undefined) throw new ApiError(400, "max_failed_reveals needs reveal_check");
    return undefined;
  }
  return { checkHash: Buffer.from(body.reveal_check, "base64url"), maxFailures: body.max_failed_reveals ?? null };
}

/** Longest `file_meta`, characters (docs/share.md, "The file's metadata before the reveal"). */
export const MAX_FILE_META_CHARS = 1400;

/**
 * A file link's `file_meta` (docs/share.md, "The file's metadata before the
 * reveal"): the file's name, type and size encrypted under the link key,
 * base64url without padding, opaque to the vault. Only without `key` and
 * with a file envelope as the value (checked by fileMetaOf).
 */
const fileMetaField = {
  file_meta: v.optional(
    v.pipe(
      v.string("file_meta must be a string"),
      v.regex(/^[A-Za-z0-9_-]+$/, "file_meta must be base64url without padding"),
      v.maxLength(MAX_FILE_META_CHARS, `file_meta may be at most ${MAX_FILE_META_CHARS} characters`),
      v.description(
        "Public file links only (a file envelope as value): the file's name, type and size encrypted under the link key, base64url, at most 1,400 characters; shown by the recipient page before the reveal (docs/share.md, 'The file's metadata before the reveal').",
      ),
    ),
  ),
};

/**
 * The `file_meta` of a create body (docs/share.md, "The file's metadata
 * before the reveal"), as the lifecycle takes it.
 * @returns undefined without `file_meta`.
 * @throws ApiError 400 for `file_meta` with a `key`, or with a value that is
 *   no file envelope (version 3: an end-to-end link of a file).
 */
export function fileMetaOf(body: { key?: string | undefined; value: string; file_meta?: string | undefined }): string | undefined {
  if (body.file_meta === undefined) return undefined;
  if (body.key !== undefined) throw new ApiError(400, "file_meta is for public secrets: leave out key");
  if (envelopeShape(body.value)?.v !== 3) throw new ApiError(400, "file_meta needs a file envelope (an end-to-end link of a file) as value");
  return body.file_meta;
}

/** POST /secrets body (docs/api.md "Global secrets"): no `key` makes a public secret. */
export const createSecretBody = v.object({
  key: v.optional(
    v.pipe(
      requiredString("key"),
      v.regex(KEY_CHARS, KEY_RULE),
      v.check(isSecretKey, KEY_RULE),
      v.check((k) => !PUBLIC_ID_PATTERN.test(k), "key must not be 64 lower-case hex characters (reserved for public ids)"),
      v.description(`${KEY_DOC}; not 64 lower-case hex characters (the shape of public ids). Omitted: a public secret.`),
    ),
  ),
  ...commonFields,
  ...revealFields,
  ...fileMetaField,
});

/** Most entries in `allowed_keys`. */
export const MAX_ALLOWED_KEYS = 100;
const ALLOWED_KEYS_IDS = "allowed_keys must hold principal key ids";

/**
 * POST /orgs/:org_id/secrets body (docs/orgs.md "Org-scoped secrets"): the global fields, `key`
 * required (any key of isSecretKey(): the 64-hex reservation is global only), `delete`
 * (default true; false seals instead of burning) and `allowed_keys`.
 */
export const createOrgSecretBody = v.object({
  key: v.pipe(requiredString("key"), v.regex(KEY_CHARS, KEY_RULE), v.check(isSecretKey, KEY_RULE), v.description(KEY_DOC)),
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

/** PUT /secrets/:key body (docs/api.md "Replace a secret"): the key is the path's. */
export const replaceSecretBody = v.object(commonFields);

/** PUT /orgs/:org_id/secrets/:key body (docs/orgs.md "Org-scoped secrets"): the org create body without `key`. */
export const replaceOrgSecretBody = v.object({
  ...commonFields,
  delete: createOrgSecretBody.entries.delete,
  allowed_keys: createOrgSecretBody.entries.allowed_keys,
});

/** PATCH body, both scopes: at least one of the two (docs/api.md "Global secrets"). */
export const patchSecretBody = v.object({
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
});

/**
 * Prefix scoping of a create body's `key` (docs/keys.md "Prefix scoping"),
 * before the body is validated (403 before 400): no key makes a public
 * secret, out of any prefix's reach; a key that is no string is left to
 * validation.
 */
export const bodyKeyInPrefix: PrefixRule = {
  from: "body",
  key: (body) => {
    if (body.key === undefined) return null;
    return typeof body.key === "string" ? body.key : undefined;
  },
};

/**
 * Checks a value's size in UTF-8 bytes against VAULT_MAX_VALUE_BYTES; an
 * end-to-end envelope may be as large as the envelope of a value of that
 * size (envelopeLimit). With `maxFileBytes` (a public secret's create), a
 * file envelope (version 3, docs/share.md "Files") is bounded instead by
 * VAULT_MAX_FILE_BYTES: the file's size as its ciphertext tells it
 * (fileSizeOfCiphertext), and the envelope's text by fileEnvelopeLimit of
 * that size (no room for more than its file).
 * @throws ApiError 413, its message naming the limit.
 */
export function checkValueSize(value: string, maxBytes: number, maxFileBytes?: number): void {
  const bytes = Buffer.byteLength(value, "utf8");
  const env = maxFileBytes !== undefined || bytes > maxBytes ? envelopeShape(value) : undefined;
  if (maxFileBytes !== undefined && env?.v === 3) {
    const size = fileSizeOfCiphertext(env.ctLength);
    if (size > maxFileBytes) throw new ApiError(413, "file too large", { message: `the file may be at most ${maxFileBytes} bytes` });
    // Its text holds its ciphertext and the header's few fields: no room to store more than the file beside it.
    if (bytes > fileEnvelopeLimit(size)) {
      throw new ApiError(413, "file too large", { message: `a file envelope may hold its ciphertext and at most 256 more characters; the file may be at most ${maxFileBytes} bytes` });
    }
    return;
  }
  if (bytes > maxBytes && !(bytes <= envelopeLimit(maxBytes) && env !== undefined)) {
    throw new ApiError(413, "value too large", { message: `the value may be at most ${maxBytes} bytes (UTF-8)` });
  }
}

/** What the vault checks of an end-to-end envelope: its version and the length of its `ct` (characters). */
export interface EnvelopeShape {
  v: 1 | 2 | 3;
  ctLength: number;
}

const CT_FIELD = '"ct":"';

/**
 * parseEnvelope's verdict on a stored value, and its `ct`'s length, without
 * parsing the megabytes of a file's `ct` (docs/performance.md, "Files"):
 * when the text has `"ct":"` followed by a string without a backslash, that
 * string is replaced by a random marker and the result parsed as
 * parseEnvelope parses it; the shortcut holds only when the parsed `ct` is
 * the marker (so it was the top-level `ct`, and no later duplicate key,
 * escaped or not, replaced it). Anything else (an escape in it, a nested or
 * repeated `ct`) is parsed whole, as before.
 * @returns the version and `ct` length, or undefined for a value that is no envelope.
 */
export function envelopeShape(text: string): EnvelopeShape | undefined {
  const start = text.indexOf(CT_FIELD);
  if (start !== -1) {
    const from = start + CT_FIELD.length;
    const end = text.indexOf('"', from);
    const escape = text.indexOf("\\", from);
    if (end !== -1 && (escape === -1 || escape > end)) {
      const marker = randomUUID();
      const cut = parseEnvelope(text.slice(0, from) + marker + text.slice(end));
      if (cut !== undefined && cut.ct === marker) return { v: cut.v, ctLength: end - from };
    }
  }
  const env = parseEnvelope(text);
  return env === undefined ? undefined : { v: env.v, ctLength: env.ct.length };
}

/**
 * The largest file envelope (version 3, docs/share.md "Files") of a file of
 * `maxFileBytes`: base64url of the 1024-byte metadata block, the file and
 * the 16-byte tag, and the JSON around it (at most 256 characters).
 */
export function fileEnvelopeLimit(maxFileBytes: number): number {
  return Math.ceil(((maxFileBytes + FILE_META_BYTES + 16) * 4) / 3) + 256;
}

/** Room a create's body has besides its value, bytes: every other field of createSecretBody fits it many times over. */
const OTHER_FIELDS_BYTES = 64 * 1024;

/**
 * The body allowance of a public create (POST /secrets without `key`): up
 * to the largest file envelope of VAULT_MAX_FILE_BYTES and its other fields,
 * admitted only for a body without `key` whose `value` is a file envelope
 * (docs/share.md "Files"); any other body keeps the 1 MiB limit. Such
 * bodies are handled one at a time, in the order they were read (its own
 * LargeBodyQueue: docs/performance.md, "Files").
 */
export function fileBody(maxFileBytes: number): LargeBody {
  const maxBytes = fileEnvelopeLimit(maxFileBytes) + OTHER_FIELDS_BYTES;
  return {
    maxBytes,
    admits: (raw) => raw.key === undefined && typeof raw.value === "string" && envelopeShape(raw.value)?.v === 3,
    message: `the body may be at most ${MAX_BODY_BYTES} bytes, or ${maxBytes} for a file of at most ${maxFileBytes} bytes`,
    queue: new LargeBodyQueue(),
  };
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

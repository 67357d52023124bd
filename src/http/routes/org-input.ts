import * as v from "valibot";
import type { Principal } from "../../domain/principals.js";
import { ApiError } from "../errors.js";
import { int } from "./answers.js";
import { seconds } from "./input.js";
import { isSafeName, unsafeNameMessage } from "./text-checks.js";

/** Largest serialized `metadata`, bytes (docs/contract.md §4). */
export const MAX_METADATA_BYTES = 16 * 1024;

/** Most characters of a `name` (docs/contract.md §4). */
export const MAX_NAME_CHARS = 128;

/**
 * The length of a string in characters (Unicode code points), not UTF-16
 * units: an emoji is one character, as a client counts it.
 */
export function charCount(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A `name` (org, principal, key label, webhook description): 1-128
 * characters (code points) after trimming, without control, bidi or
 * zero-width characters (text-checks.ts isSafeName) (docs/contract.md §4).
 */
export const nameField = (field = "name") =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.trim(),
    v.minLength(1, `${field} must not be empty`),
    v.check((text) => charCount(text) <= MAX_NAME_CHARS, `${field} must be at most ${MAX_NAME_CHARS} characters`),
    v.check(isSafeName, unsafeNameMessage(field)),
  );

/** `metadata`: a JSON object of at most 16 KiB serialized (docs/contract.md §4). */
export const metadataField = v.pipe(
  v.custom<Record<string, unknown>>(
    (m) => typeof m === "object" && m !== null && !Array.isArray(m),
    "metadata must be a JSON object",
  ),
  v.check(
    (m) => Buffer.byteLength(JSON.stringify(m), "utf8") <= MAX_METADATA_BYTES,
    `metadata must be at most ${MAX_METADATA_BYTES} bytes serialized`,
  ),
);

/** Role names (docs/contract.md §4). */
export const ROLE_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,63}$/;

/** A role `name` in a body. */
export const roleNameField = (field = "role") =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.minLength(1, `${field} must not be empty`),
    v.regex(ROLE_NAME_PATTERN, `${field} must match ^[a-z][a-z0-9_-]{0,63}$`),
  );

/**
 * A role permission string: a string here; its letters are checked by the
 * roles domain (docs/contract.md §8) so the rule lives in one place.
 */
export const permissionsField = v.pipe(
  v.string("permissions must be a string of permission letters"),
  v.maxLength(14, "permissions may hold only the letters rRlLcCpPaAmMdD, each at most once"),
);

/** A principal in responses: `{id, name, org_id, role, metadata, created_at}`. */
export function principalJson(p: Principal) {
  return { id: p.id, name: p.name, org_id: p.orgId, role: p.role, metadata: p.metadata, created_at: seconds(p.createdAt) };
}

/** What an id looks like unless its resource says more: a short printable string. */
const ANY_ID = /^[A-Za-z0-9_]{1,64}$/;

/**
 * The id a path parameter names (`:id`, `:key_id`): an id not of the
 * resource's shape cannot exist, so it is 404. Called where the resource is
 * looked up (after its org), not as input validation.
 * @param pattern the shape of the resource's ids; default: 1-64 of `A-Za-z0-9_`.
 * @returns the id.
 * @throws ApiError 404 with `notFound` as the error.
 */
export function idOrNotFound(id: string, notFound: string, pattern: RegExp = ANY_ID): string {
  if (!pattern.test(id)) throw new ApiError(404, notFound);
  return id;
}

/** The fields of a principal in answers. */
export const principalFields = {
  id: v.string(),
  name: v.string(),
  org_id: v.string(),
  role: v.string(),
  metadata: v.record(v.string(), v.unknown()),
  created_at: int,
};

/** A principal. */
export const principalSchema = v.object(principalFields);

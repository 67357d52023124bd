import * as v from "valibot";
import type { Principal } from "../domain/principals.js";
import type { PrincipalKey } from "../domain/principal-keys.js";
import type { AppContext } from "../context.js";
import { ApiError } from "../errors.js";
import { intRange, seconds } from "./input.js";

/** Largest serialized `metadata`, bytes (decisions.md section 2). */
export const MAX_METADATA_BYTES = 16 * 1024;
/** Latest accepted valid_after / valid_before: 9999-12-31T23:59:59Z, Unix seconds. */
export const MAX_UNIX_SECONDS = 253_402_300_799;

/** Most characters of a `name` (decisions.md section 2). */
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
 * characters (code points) after trimming (decisions.md section 2).
 */
export const nameField = (field = "name") =>
  v.pipe(
    v.string(`${field} must be a string`),
    v.trim(),
    v.minLength(1, `${field} must not be empty`),
    v.check((text) => charCount(text) <= MAX_NAME_CHARS, `${field} must be at most ${MAX_NAME_CHARS} characters`),
  );

/** `metadata`: a JSON object of at most 16 KiB serialized (decisions.md section 2). */
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

/** Role names (decisions.md section 2). */
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
 * roles domain (decisions.md section 5) so the rule lives in one place.
 */
export const permissionsField = v.pipe(
  v.string("permissions must be a string of permission letters"),
  v.maxLength(14, "permissions may hold only the letters rRlLcCpPaAmMdD, each at most once"),
);

/**
 * POST /orgs/:org_id/principals/:id/keys and POST /me/keys (decisions.md
 * section 6): `name`, and optional `valid_after` / `valid_before` in Unix seconds.
 */
export const newKeyBody = v.object({
  name: nameField(),
  valid_after: v.optional(intRange("valid_after", 0, MAX_UNIX_SECONDS)),
  valid_before: v.optional(intRange("valid_before", 0, MAX_UNIX_SECONDS)),
});

/** The domain input of newKeyBody: seconds become milliseconds. */
export function newKeyInput(body: v.InferOutput<typeof newKeyBody>): {
  name: string;
  validAfter: number | undefined;
  validBefore: number | undefined;
} {
  return {
    name: body.name,
    validAfter: body.valid_after === undefined ? undefined : body.valid_after * 1000,
    validBefore: body.valid_before === undefined ? undefined : body.valid_before * 1000,
  };
}

/** A principal in responses: `{id, name, org_id, role, metadata, created_at}`. */
export function principalJson(p: Principal) {
  return { id: p.id, name: p.name, org_id: p.orgId, role: p.role, metadata: p.metadata, created_at: seconds(p.createdAt) };
}

/** A principal key summary: `{id, name, valid_after, valid_before, created_at}`; never the token. */
export function keySummaryJson(k: PrincipalKey) {
  return {
    id: k.id,
    name: k.name,
    valid_after: seconds(k.validAfter),
    valid_before: seconds(k.validBefore),
    created_at: seconds(k.createdAt),
  };
}

/** The create response of a principal key: the summary plus `key`, the token, shown this once. */
export function createdKeyJson(k: PrincipalKey, token: string) {
  const summary = keySummaryJson(k);
  return { id: summary.id, name: summary.name, key: token, valid_after: summary.valid_after, valid_before: summary.valid_before, created_at: summary.created_at };
}

/**
 * A path parameter that names a resource by id (`:id`, `:key_id`): ids are
 * short printable strings; anything else cannot exist, so it is 404.
 * @throws ApiError 404 with `notFound` as the error.
 */
export function pathId(c: AppContext, param: string, notFound: string): string {
  const id = c.req.param(param) ?? "";
  if (!/^[A-Za-z0-9_]{1,64}$/.test(id)) throw new ApiError(404, notFound);
  return id;
}

/** OpenAPI schema of a principal. */
export const principalSchema = {
  type: "object",
  required: ["id", "name", "org_id", "role", "metadata", "created_at"],
  properties: {
    id: { type: "string" },
    name: { type: "string" },
    org_id: { type: "string" },
    role: { type: "string" },
    metadata: { type: "object" },
    created_at: { type: "integer" },
  },
};

/** OpenAPI schema of a principal key summary. */
export const keySummarySchema = {
  type: "object",
  required: ["id", "name", "valid_after", "valid_before", "created_at"],
  properties: {
    id: { type: "string" },
    name: { type: "string" },
    valid_after: { type: ["integer", "null"] },
    valid_before: { type: ["integer", "null"] },
    created_at: { type: "integer" },
  },
};

/** OpenAPI schema of a created principal key (token shown once). */
export const createdKeySchema = {
  ...keySummarySchema,
  required: [...keySummarySchema.required, "key"],
  properties: { ...keySummarySchema.properties, key: { type: "string", description: "vpk_ token, shown only here" } },
};

/** OpenAPI schema of `{deleted: true}`. */
export const deletedSchema = { type: "object", properties: { deleted: { const: true } } };

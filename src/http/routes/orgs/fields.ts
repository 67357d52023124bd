import * as v from "valibot";
import type { Principal } from "../../../domain/orgs/principals.js";
import { int, seconds } from "../answers.js";

/**
 * The fields of the organization routes (docs/contract.md §4): `metadata`,
 * role names and permission strings in bodies, and a principal in answers
 * with its schema. A `name` is input.ts nameField.
 */

/** Largest serialized `metadata`, bytes (docs/contract.md §4). */
export const MAX_METADATA_BYTES = 16 * 1024;

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

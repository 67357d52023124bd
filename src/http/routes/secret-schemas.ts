import * as v from "valibot";
import { int } from "./answers.js";
import { listSchema } from "./lists.js";

/**
 * The response schemas of the secret routes (routes/secrets/), one family
 * for both scopes: global and org secrets differ only by fields (a global
 * secret is `key` or, public, `id`; an org secret has an owner, a state and
 * its burn rule). Times are Unix seconds.
 */

const metaFields = {
  created_at: int,
  expires_at: v.nullable(int),
  max_reads: v.nullable(int),
  read_count: int,
};
/** How a global secret is named: `key`, or `id` for a public secret. */
export const globalName = {
  key: v.optional(v.pipe(v.string(), v.description("present for keyed secrets"))),
  id: v.optional(v.pipe(v.string(), v.description("present for public secrets (64 hex)"))),
};
/** A global list entry. */
export const globalMeta = v.object({ ...globalName, ...metaFields });
/** An org list entry. */
export const orgMeta = v.object({
  key: v.string(),
  ...metaFields,
  owner_id: v.pipe(v.nullable(v.string()), v.description("the creating principal; null when the master key created it")),
  state: v.picklist(["active", "sealed"]),
  delete: v.pipe(v.boolean(), v.description("true: burns on its last read; false: seals")),
});
/** A global read: the only answer that carries a value. */
export const globalRead = v.object({ ...globalName, value: v.string(), ...metaFields });
/** An org read: the only answer that carries a value. */
export const orgRead = v.object({ key: v.string(), value: v.string(), ...metaFields });
/** A page of secrets, `{secrets, next_cursor?}`. */
export const globalPage = listSchema("secrets", globalMeta);
/** A page of an org's secrets, `{secrets, next_cursor?}`. */
export const orgPage = listSchema("secrets", orgMeta);
/** `{pruned}`: how many tombstones were removed. */
export const pruned = v.object({ pruned: int });

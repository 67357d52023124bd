import * as v from "valibot";
import { keyPrefixOf } from "../auth.js";
import { SCOPED_PERMISSIONS } from "../../domain/permissions.js";
import type { ScopedKey, ScopedKeys } from "../../domain/keys.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { int, nullableInt, seconds } from "./answers.js";
import { intRange, isSafeName, MAX_UNIX_SECONDS, unsafeNameMessage } from "./input.js";
import { isKeyPrefix, KEY_CHARS, PREFIX_RULE } from "./secrets/secret-route.js";
import type { Route } from "./declare.js";
import { DELETED, listOp, op } from "./ops.js";

/** POST /keys body (docs/keys.md, docs/contract.md §4, §5 and §8). */
export const createKeyBody = v.object({
  name: v.pipe(
    v.string("name must be a string"),
    v.trim(),
    v.minLength(1, "name must not be empty"),
    v.maxLength(128, "name must be at most 128 characters"),
    v.check(isSafeName, unsafeNameMessage("name")),
  ),
  permissions: v.pipe(
    v.array(
      v.picklist(SCOPED_PERMISSIONS, "permissions must each be read, write, delete or admin"),
      "permissions must be an array of read, write, delete, admin",
    ),
    v.minLength(1, "permissions must not be empty"),
  ),
  prefix: v.optional(
    v.nullable(
      v.pipe(
        v.string("prefix must be a string"),
        v.regex(KEY_CHARS, PREFIX_RULE),
        v.check(isKeyPrefix, PREFIX_RULE),
        v.description(
          "keyed secrets whose key starts with it: 1 to 256 characters of A-Z a-z 0-9 . _ - ~ @ : + = /, not starting with /, with no empty, . or .. segment; it may end with / (prod/)",
        ),
      ),
    ),
  ),
  expires_at: v.optional(v.nullable(intRange("expires_at", 1, MAX_UNIX_SECONDS))),
});

const keyFields = {
  id: v.pipe(v.string(), v.description("sk_...")),
  name: v.string(),
  permissions: v.array(v.picklist(SCOPED_PERMISSIONS)),
  prefix: v.nullable(v.string()),
  expires_at: nullableInt,
  created_at: int,
};

/** A scoped key as lists show it: never the token. */
const keySchema = v.object(Object.assign({}, keyFields, { last_used_at: v.pipe(nullableInt, v.description("updated at most once a minute")) }));

/** A created key: its token, shown this once. */
const createdKeySchema = v.object(
  Object.assign({}, keyFields, {
    id: v.string(),
    token: v.pipe(v.string(), v.description("vsk_ + 43 base64url characters; shown once")),
  }),
);

export interface KeyRouteDeps {
  scopedKeys: ScopedKeys;
  tx: UnitOfWork<Work>;
}

/** A key as lists show it: never the token. */
function keyEntry(k: ScopedKey) {
  return {
    id: k.id,
    name: k.name,
    permissions: k.permissions,
    prefix: k.prefix,
    expires_at: seconds(k.expiresAt),
    created_at: seconds(k.createdAt),
    last_used_at: seconds(k.lastUsedAt),
  };
}

/**
 * Scoped API keys (docs/contract.md §2): create, list, delete; all need the
 * admin permission (the master key holds it). Creation rules (no broader key
 * than its creator) are in domain/keys.ts.
 */
export function keyRoutes(deps: KeyRouteDeps): Route[] {
  const { scopedKeys, tx } = deps;
  return [
    op("post", "/keys", "admin", {
      summary:
        "Create a scoped API key. The token (vsk_...) is in this response only. A scoped admin key may grant only permissions it holds, a prefix starting with its own and an expiry no later than its own; only the master key creates an admin key without a prefix.",
      body: createKeyBody,
      ok: [201, "{id, name, token, permissions, prefix, expires_at, created_at}", createdKeySchema],
      errors: { 400: "invalid input, or expires_at not in the future", 403: "the token may not do this, or the new key would be broader than the creating key" },
      run: async (c, { body }, origin) => {
        const actor = c.get("actor");
        const input = { name: body.name, permissions: body.permissions, prefix: body.prefix ?? null, expiresAt: body.expires_at == null ? null : body.expires_at * 1000 };
        const { key, token } = await tx.run((w) => scopedKeys.create(w, input, actor.kind === "scoped" ? actor.keyId : null, origin));
        const { id, name, permissions, prefix } = key;
        return { id, name, token, permissions, prefix, expires_at: seconds(key.expiresAt), created_at: seconds(key.createdAt) };
      },
    }),
    listOp("/keys", "admin", {
      summary: "List scoped keys, oldest first, without tokens. A prefixed admin key sees only keys within its prefix.",
      auditAction: "key.listed",
      field: "keys",
      item: keySchema,
      // Read through the group commit, like every other request: the answer
      // leaves only once what it shows is committed.
      page: (c, _params, { limit, afterId }) => tx.run((w) => scopedKeys.list(w, keyPrefixOf(c) ?? null, { limit, after: afterId })),
      json: keyEntry,
    }),
    op("delete", "/keys/:id", "admin", {
      summary: "Delete (revoke) a scoped key at once: later requests with its token get 401.",
      params: v.object({ id: v.pipe(v.string(), v.description("the key's id, sk_...")) }),
      ok: DELETED,
      errors: { 403: "the token may not do this, or the key is outside the deleting key's prefix", 404: "no such key" },
      run: (c, { params }, origin) => tx.run((w) => scopedKeys.remove(w, params.id, keyPrefixOf(c) ?? null, origin)),
    }),
  ];
}

import * as v from "valibot";
import { originOf } from "../context.js";
import { keyPrefixOf } from "../auth.js";
import { SCOPED_PERMISSIONS } from "../../domain/permissions.js";
import type { ScopedKey, ScopedKeys } from "../../domain/keys.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { deletedSchema, int, nullableInt } from "./answers.js";
import { intRange, MAX_UNIX_SECONDS, pageQuery, seconds } from "./input.js";
import { isKeyPrefix, KEY_CHARS, PREFIX_RULE } from "./secret-input.js";
import { listSchema, pageBody } from "./lists.js";
import { deletedAnswer, pageOf } from "./org-scope.js";
import type { Route } from "./declare.js";
import { route } from "./declare.js";
import { isSafeName, unsafeNameMessage } from "./text-checks.js";

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
    route({
      method: "post",
      path: "/keys",
      summary:
        "Create a scoped API key. The token (vsk_...) is in this response only. A scoped admin key may grant only permissions it holds, a prefix starting with its own and an expiry no later than its own; only the master key creates an admin key without a prefix.",
      permission: "admin",
      body: createKeyBody,
      responses: {
        201: {
          description: "{id, name, token, permissions, prefix, expires_at, created_at}",
          schema: createdKeySchema,
        },
        400: { description: "invalid input, or expires_at not in the future" },
        403: { description: "the token may not do this, or the new key would be broader than the creating key" },
      },
      handler: async (c, { body }) => {
        const actor = c.get("actor");
        const origin = originOf(c);
        const { key, token } = await tx.run((w) =>
          scopedKeys.create(
            w,
            {
              name: body.name,
              permissions: body.permissions,
              prefix: body.prefix ?? null,
              expiresAt: body.expires_at == null ? null : body.expires_at * 1000,
            },
            actor.kind === "scoped" ? actor.keyId : null,
            origin,
          ),
        );
        return c.json(
          {
            id: key.id,
            name: key.name,
            token,
            permissions: key.permissions,
            prefix: key.prefix,
            expires_at: seconds(key.expiresAt),
            created_at: seconds(key.createdAt),
          },
          201,
        );
      },
    }),
    route({
      method: "get",
      path: "/keys",
      summary: "List scoped keys, oldest first, without tokens. A prefixed admin key sees only keys within its prefix.",
      permission: "admin",
      auditAction: "key.listed",
      query: pageQuery,
      responses: {
        200: { description: "{keys, next_cursor?}", schema: listSchema("keys", keySchema) },
        400: { description: "invalid limit or cursor" },
      },
      handler: async (c, { query }) => {
        const { limit, afterId } = pageOf(query);
        // Read through the group commit, like every other request: the answer
        // leaves only once what it shows is committed.
        const page = await tx.run((w) => scopedKeys.list(w, keyPrefixOf(c) ?? null, { limit, after: afterId }));
        return c.json(pageBody("keys", page.items.map(keyEntry), page.nextAfterId));
      },
    }),
    route({
      method: "delete",
      path: "/keys/:id",
      summary: "Delete (revoke) a scoped key at once: later requests with its token get 401.",
      permission: "admin",
      params: v.object({ id: v.pipe(v.string(), v.description("the key's id, sk_...")) }),
      responses: {
        200: { description: "{deleted: true}", schema: deletedSchema },
        403: { description: "the token may not do this, or the key is outside the deleting key's prefix" },
        404: { description: "no such key" },
      },
      handler: async (c, { params }) => {
        const id = params.id;
        const origin = originOf(c);
        await tx.run((w) => scopedKeys.remove(w, id, keyPrefixOf(c) ?? null, origin));
        return deletedAnswer(c);
      },
    }),
  ];
}

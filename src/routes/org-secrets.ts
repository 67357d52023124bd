import { Hono } from "hono";
import * as v from "valibot";
import type { AppContext, AppEnv } from "../context.js";
import { originOf } from "../context.js";
import type { PrincipalKeys } from "../domain/principal-keys.js";
import type { SecretLifecycle, SecretMeta } from "../domain/secrets.js";
import { ApiError } from "../errors.js";
import type { GroupCommit } from "../group-commit.js";
import { needOrg, orgIdOf } from "../org-auth.js";
import type { RouteDoc } from "../openapi.js";
import { decodeCursor, pageQuery, parse, readBody, requiredString, seconds } from "./input.js";
import { listSchema, pageBody, pageQueryDocs } from "./lists.js";
import { methodNotAllowed } from "./method.js";
import { deletedSchema } from "./org-input.js";
import { KEY_PATTERN, checkValueSize, createSecretBody, patchSecretBody, pathKey, readJson } from "./secrets.js";

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
  ...createSecretBody.entries,
  key: v.pipe(
    requiredString("key"),
    v.regex(KEY_PATTERN, "key must be 1-256 characters of A-Z a-z 0-9 . _ - ~ @ : + = / and not start with /"),
  ),
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

export interface OrgSecretRouteDeps {
  secrets: SecretLifecycle;
  keys: PrincipalKeys;
  tx: GroupCommit;
  maxValueBytes: number;
}

const NOT_FOUND = "secret not found";
const SEALED = { error: "secret sealed", message: "its reads are exhausted; PATCH max_reads to reactivate it" };

const NOT_ALLOWED = "this key is not in the secret's allowed_keys";

/** `allowed_keys` (decisions.md section 5): unset, or the master key (null), or a listed key id. */
function allowedToRead(s: SecretMeta, principalKeyId: string | null): boolean {
  return s.allowedKeys === null || principalKeyId === null || s.allowedKeys.includes(principalKeyId);
}

/** The principal key id of the caller for `allowed_keys`, or null for the master key. */
function readerOf(c: AppContext): { principalKeyId: string | null } {
  const actor = c.get("actor");
  return { principalKeyId: actor.kind === "principal" ? actor.keyId : null };
}

/** List metadata of an org secret: never the value. */
function listEntry(s: SecretMeta) {
  return {
    key: s.key,
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
    owner_id: s.ownerId,
    state: s.state,
    delete: s.burnOnLimit,
  };
}

/**
 * Org-scoped secrets (interface section 4, decisions.md sections 4-5): the
 * one SecretLifecycle with scope = the org id. Each route declares its role
 * letter through needOrg(); the org's existence (404) is checked after the
 * input (400/413).
 */
export function orgSecretRoutes(deps: OrgSecretRouteDeps): Hono<AppEnv> {
  const { secrets, keys, tx } = deps;
  const app = new Hono<AppEnv>();

  app.post("/orgs/:org_id/secrets", needOrg("c"), async (c) => {
    const body = await readBody(c, createOrgSecretBody);
    checkValueSize(body.value, deps.maxValueBytes);
    const orgId = orgIdOf(c);
    const actor = c.get("actor");
    const origin = originOf(c);
    const allowedKeys = body.allowed_keys ? [...new Set(body.allowed_keys)] : null;
    const created = await tx.run(() => {
      if (allowedKeys) keys.checkAllowedKeys(orgId, allowedKeys);
      return secrets.create(
        {
          scope: orgId,
          key: body.key,
          value: body.value,
          ttlSeconds: body.ttl_seconds,
          maxReads: body.max_reads,
          burnOnLimit: body.delete !== false,
          ownerId: actor.kind === "principal" ? actor.principalId : null,
          allowedKeys,
        },
        origin,
      );
    });
    return c.json({ key: created.key }, 201);
  });

  app.get("/orgs/:org_id/secrets", needOrg("l"), async (c) => {
    const query = parse(pageQuery, c.req.query());
    const afterId = decodeCursor(query.cursor);
    const orgId = orgIdOf(c);
    const page = await tx.run(() => secrets.list(orgId, { limit: query.limit ?? 1000, afterId, includeSealed: true }));
    return c.json(pageBody("secrets", page.secrets.map(listEntry), page.nextAfterId));
  });
  app.all("/orgs/:org_id/secrets", methodNotAllowed(["GET", "HEAD", "POST"]));

  app.get("/orgs/:org_id/secrets/:key{.+}", needOrg("r"), async (c) => {
    const key = pathKey(c);
    const orgId = orgIdOf(c);
    const origin = originOf(c);
    const reader = readerOf(c);
    if (c.req.method === "HEAD") {
      // Existence only: no decryption, no read counted (interface section 4).
      const found = await tx.run(() => secrets.peek(orgId, key, origin));
      if (!found) throw new ApiError(404, NOT_FOUND);
      if (!allowedToRead(found, reader.principalKeyId)) throw new ApiError(403, NOT_ALLOWED);
      if (found.state === "sealed") throw new ApiError(410, SEALED.error, { message: SEALED.message });
      return c.body(null, 200);
    }
    const outcome = await tx.run(() => secrets.retrieve(orgId, key, reader, origin));
    switch (outcome.kind) {
      case "not_found":
        throw new ApiError(404, NOT_FOUND);
      case "forbidden":
        throw new ApiError(403, NOT_ALLOWED);
      case "sealed":
        throw new ApiError(410, SEALED.error, { message: SEALED.message });
      case "ok":
        return c.json(readJson({ key: outcome.secret.key }, outcome.secret, outcome.value));
    }
  });

  app.patch("/orgs/:org_id/secrets/:key{.+}", needOrg("P"), async (c) => {
    const key = pathKey(c);
    const body = await readBody(c, patchSecretBody);
    const orgId = orgIdOf(c);
    const origin = originOf(c);
    const outcome = await tx.run(() =>
      secrets.update(orgId, key, { ttlSeconds: body.ttl_seconds, maxReads: body.max_reads }, origin, { sealable: true }),
    );
    if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
    return c.json({ key: outcome.secret.key, updated: true });
  });

  app.delete("/orgs/:org_id/secrets/:key{.+}", needOrg("d"), async (c) => {
    const key = pathKey(c);
    const orgId = orgIdOf(c);
    const origin = originOf(c);
    const outcome = await tx.run(() => secrets.remove(orgId, key, origin));
    if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
    return c.json({ deleted: true });
  });
  app.all("/orgs/:org_id/secrets/:key{.+}", methodNotAllowed(["GET", "HEAD", "PATCH", "DELETE"]));

  app.post("/orgs/:org_id/prune", needOrg("C"), async (c) => {
    const orgId = orgIdOf(c);
    const origin = originOf(c);
    const pruned = await tx.run(() => secrets.prune(orgId, origin));
    return c.json({ pruned });
  });
  app.all("/orgs/:org_id/prune", methodNotAllowed(["POST"]));

  return app;
}

const orgSecretMetaSchema = {
  type: "object",
  required: ["key", "created_at", "expires_at", "max_reads", "read_count", "owner_id", "state", "delete"],
  properties: {
    key: { type: "string" },
    created_at: { type: "integer" },
    expires_at: { type: ["integer", "null"] },
    max_reads: { type: ["integer", "null"] },
    read_count: { type: "integer" },
    owner_id: { type: ["string", "null"], description: "the creating principal; null when the master key created it" },
    state: { enum: ["active", "sealed"] },
    delete: { type: "boolean", description: "true: burns on its last read; false: seals" },
  },
};

/** OpenAPI description of the routes above. */
export const orgSecretRouteDocs: RouteDoc[] = [
  {
    method: "post",
    path: "/orgs/{org_id}/secrets",
    summary:
      "Create an org secret. delete=false seals it on its last read instead of burning it. allowed_keys: principal key ids of this org that may read it (and the master key); omitted: org-wide.",
    permission: "org:c",
    body: createOrgSecretBody,
    responses: {
      201: { description: "{key}", schema: { type: "object", properties: { key: { type: "string" } } } },
      400: "invalid input, or an allowed_keys id that is not a key of this org",
      402: "free tier limit of 100 active secrets reached",
      404: "no such organization",
      409: "a live secret with this key exists in the org",
      413: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB",
    },
  },
  {
    method: "get",
    path: "/orgs/{org_id}/secrets",
    summary: "List the org's live secrets (active and sealed), never values, oldest first.",
    permission: "org:l",
    query: pageQueryDocs,
    responses: {
      200: {
        description: "{secrets, next_cursor?}",
        schema: listSchema("secrets", orgSecretMetaSchema),
      },
      404: "no such organization",
    },
  },
  {
    method: "get",
    path: "/orgs/{org_id}/secrets/{key}",
    summary:
      "Retrieve an org secret's value and count the read; the read that reaches max_reads burns it (delete=true) or seals it (delete=false). HEAD answers existence without decrypting or counting.",
    permission: "org:r",
    responses: {
      200: {
        description: "{key, value, created_at, expires_at, max_reads, read_count}; read_count after this read",
        schema: {
          type: "object",
          required: ["key", "value", "created_at", "expires_at", "max_reads", "read_count"],
          properties: {
            key: { type: "string" },
            value: { type: "string" },
            created_at: { type: "integer" },
            expires_at: { type: ["integer", "null"] },
            max_reads: { type: ["integer", "null"] },
            read_count: { type: "integer" },
          },
        },
      },
      403: "the token may not do this, or the key is not in the secret's allowed_keys",
      404: "missing, expired or burned; or no such organization",
      410: "sealed: its reads are exhausted",
    },
  },
  {
    method: "patch",
    path: "/orgs/{org_id}/secrets/{key}",
    summary:
      "Only for secrets created with delete=false: ttl_seconds sets a new TTL from now; max_reads sets a new limit, resets read_count to 0 and reactivates a sealed secret. Neither: 400.",
    permission: "org:P",
    body: patchSecretBody,
    responses: {
      200: { description: "{key, updated: true}", schema: { type: "object", properties: { key: { type: "string" }, updated: { const: true } } } },
      400: "neither field given, or invalid",
      404: "missing, expired or burned; or no such organization",
      409: "the secret was created with delete=true",
    },
  },
  {
    method: "delete",
    path: "/orgs/{org_id}/secrets/{key}",
    summary: "Delete an org secret (active or sealed) at once.",
    permission: "org:d",
    responses: { 200: { description: "{deleted: true}", schema: deletedSchema }, 404: "missing; or no such organization" },
  },
  {
    method: "post",
    path: "/orgs/{org_id}/prune",
    summary: "Remove the tombstones of the org's expired secrets.",
    permission: "org:C",
    responses: { 200: { description: "{pruned}", schema: { type: "object", properties: { pruned: { type: "integer" } } } }, 404: "no such organization" },
  },
];

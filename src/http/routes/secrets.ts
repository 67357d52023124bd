import * as v from "valibot";
import type { AppContext } from "../context.js";
import { originOf } from "../context.js";
import { keyPrefixOf, requireInPrefix } from "../auth.js";
import { ApiError } from "../errors.js";
import { GLOBAL_SCOPE } from "../../domain/secret-model.js";
import type { CheckOutcome, Reader, RetrieveOutcome } from "../../domain/secret-model.js";
import type { Awaitable, Work } from "../../store/work.js";
import { orgIdOf } from "../org-auth.js";
import type { ResponseDecl, RouteDecl } from "./declare.js";
import { decodeCursor, pageQuery, parse, readBody, readJsonObject } from "./input.js";
import { pageBody, pageQueryDocs } from "./lists.js";
import { metaJson, named, orgListEntry, readJson } from "./secret-json.js";
import { checkValueSize, createOrgSecretBody, createSecretBody, KEY_DOC, patchSecretBody, pathKey } from "./secret-input.js";
import type { SecretRouteDeps, SecretScope } from "./secret-deps.js";
import { replaceRouteDecl } from "./secret-replace.js";
import { deleted, globalMeta, globalName, globalRead, orgMeta, orgRead, page, pruned } from "./secret-schemas.js";

const NOT_FOUND = "secret not found";
const SEALED = { error: "secret sealed", message: "its reads are exhausted; PATCH max_reads to reactivate it" };
const NOT_ALLOWED = "this key is not in the secret's allowed_keys";

/** The reader for `allowed_keys`: the caller's principal key id, or null for every other token. */
function readerOf(c: AppContext): Reader {
  const actor = c.get("actor");
  return { principalKeyId: actor.kind === "principal" ? actor.keyId : null };
}

/**
 * The answer of a read or check that did not find a readable secret.
 * @throws ApiError 404, 403 (allowed_keys) or 410 (sealed).
 */
function refuse(outcome: Exclude<RetrieveOutcome | CheckOutcome, { kind: "ok" }>): never {
  switch (outcome.kind) {
    case "not_found":
      throw new ApiError(404, NOT_FOUND);
    case "forbidden":
      throw new ApiError(403, NOT_ALLOWED);
    case "sealed":
      throw new ApiError(410, SEALED.error, { message: SEALED.message });
  }
}

/**
 * The secret routes of one scope (interface section 4 "Global secrets" and
 * "Org-scoped secrets", decisions.md sections 2-5): one SecretLifecycle,
 * the scope being GLOBAL_SCOPE or the org id. Global routes are guarded by
 * scoped-key permissions and prefixes (public secrets, no sealing); org
 * routes by role letters (allowed_keys, owners, sealing). Thin handlers:
 * validate, call the lifecycle inside the group commit, shape the answer.
 */
export function secretRouteDecls(deps: SecretRouteDeps, scope: SecretScope): RouteDecl[] {
  const { secrets, tx } = deps;
  const org = scope === "org";
  const base = org ? "/orgs/:org_id/secrets" : "/secrets";
  /**
   * Runs `fn` in a unit of work with the route's scope: the org id, checked
   * to exist in the same transaction (404), or GLOBAL_SCOPE.
   */
  const inScope = <T>(c: AppContext, fn: (w: Work, scope: string) => Awaitable<T>): Promise<T> =>
    org ? tx.run(async (w) => fn(w, await orgIdOf(w, c))) : tx.run((w) => fn(w, GLOBAL_SCOPE));
  const noOrg: Record<number, ResponseDecl> = org ? { 404: { description: "no such organization" } } : {};
  const where = org ? "; or no such organization" : "";
  /** The `{key}` path parameter: the key rule (a global one may also be a public id). */
  const keyParam = { key: org ? KEY_DOC : `${KEY_DOC}; or a public secret's id (64 lower-case hex characters)` };
  /** Responses only the org scope has. */
  const orgOnly = (responses: Record<number, ResponseDecl>): Record<number, ResponseDecl> => (org ? responses : {});

  const create: RouteDecl["handler"] = org
    ? async (c) => {
        const body = await readBody(c, createOrgSecretBody);
        checkValueSize(body.value, deps.maxValueBytes);
        const actor = c.get("actor");
        const origin = originOf(c);
        const allowedKeys = body.allowed_keys ? [...new Set(body.allowed_keys)] : null;
        const created = await tx.run(async (w) => {
          const orgId = await orgIdOf(w, c);
          if (allowedKeys) await deps.keys.checkAllowedKeys(w, orgId, allowedKeys);
          return secrets.create(
            w,
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
      }
    : async (c) => {
        const raw = await readJsonObject(c);
        // Prefix scoping before validation (403 before 400); no key: a public secret.
        if (raw.key === undefined || typeof raw.key === "string") requireInPrefix(c, raw.key ?? null);
        const body = parse(createSecretBody, raw);
        checkValueSize(body.value, deps.maxValueBytes);
        const origin = originOf(c);
        const created = await tx.run((w) =>
          secrets.create(
            w,
            { scope: GLOBAL_SCOPE, key: body.key, value: body.value, ttlSeconds: body.ttl_seconds, maxReads: body.max_reads },
            origin,
          ),
        );
        if (created.isPublic) {
          const url = typeof deps.publicUrl === "function" ? deps.publicUrl() : deps.publicUrl;
          return c.json({ id: created.key, url: `${url}${deps.publicPath}${created.key}` }, 201);
        }
        return c.json({ key: created.key }, 201);
      };

  return [
    {
      method: "post",
      path: base,
      summary: org
        ? "Create an org secret. delete=false seals it on its last read instead of burning it. allowed_keys: principal key ids of this org that may read it (and the master key); omitted: org-wide."
        : "Create a global secret: keyed when `key` is given, else public (a dead drop).",
      permission: org ? "org:c" : "write",
      body: org ? createOrgSecretBody : createSecretBody,
      responses: {
        201: org
          ? { description: "{key}", schema: v.object({ key: v.string() }) }
          : {
              description: "Created. Keyed: {key}. Public: {id, url}.",
              schema: v.union([v.object({ key: v.string() }), v.object({ id: v.string(), url: v.string() })]),
            },
        400: { description: org ? "invalid input, or an allowed_keys id that is not a key of this org" : "invalid input" },
        402: { description: "free tier limit of 100 active secrets reached" },
        ...noOrg,
        409: { description: org ? "a live secret with this key exists in the org" : "a live secret with this key exists" },
        413: { description: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB" },
      },
      handler: create,
    },
    {
      method: "get",
      path: base,
      summary: org
        ? "List the org's live secrets (active and sealed), never values, oldest first."
        : "List global secrets' metadata (never values), oldest first.",
      permission: org ? "org:l" : "admin",
      auditAction: "secret.listed",
      query: pageQueryDocs,
      responses: {
        200: { description: "{secrets, next_cursor?}", schema: org ? page(orgMeta) : page(globalMeta) },
        400: { description: "invalid limit or cursor" },
        ...noOrg,
      },
      handler: async (c) => {
        const query = parse(pageQuery, c.req.query());
        const afterId = decodeCursor(query.cursor);
        const limit = query.limit ?? 1000;
        if (org) {
          const found = await inScope(c, (w, orgId) => secrets.list(w, orgId, { limit, afterId, includeSealed: true }));
          return c.json(pageBody("secrets", found.secrets.map(orgListEntry), found.nextAfterId));
        }
        const found = await tx.run((w) => secrets.list(w, GLOBAL_SCOPE, { limit, afterId, keyPrefix: keyPrefixOf(c) }));
        return c.json(pageBody("secrets", found.secrets.map(metaJson), found.nextAfterId));
      },
    },
    {
      method: "get",
      path: `${base}/:key{.+}`,
      params: keyParam,
      summary: org
        ? "Retrieve an org secret's value and count the read; the read that reaches max_reads burns it (delete=true) or seals it (delete=false). HEAD answers existence without decrypting or counting."
        : "Retrieve a secret's value and count the read. The read that reaches max_reads burns it. HEAD answers existence without counting a read.",
      permission: org ? "org:r" : "read",
      // The GET records secret.read itself; a HEAD records this.
      auditAction: "secret.checked",
      responses: {
        200: {
          description: `{${org ? "key" : "key | id"}, value, created_at, expires_at, max_reads, read_count}; read_count after this read`,
          schema: org ? orgRead : globalRead,
        },
        400: { description: "invalid secret key" },
        ...orgOnly({ 403: { description: "the token may not do this, or the key is not in the secret's allowed_keys" } }),
        404: { description: `missing, expired or burned${where}` },
        ...orgOnly({ 410: { description: "sealed: its reads are exhausted" } }),
      },
      handler: async (c) => {
        const key = pathKey(c);
        const origin = originOf(c);
        const reader = readerOf(c);
        if (c.req.method === "HEAD") {
          // Existence only: no decryption, no read counted (interface section 4).
          const checked = await inScope(c, (w, scope) => secrets.check(w, scope, key, reader, origin));
          if (checked.kind !== "ok") refuse(checked);
          return c.body(null, 200);
        }
        const outcome = await inScope(c, (w, scope) => secrets.retrieve(w, scope, key, reader, origin));
        if (outcome.kind !== "ok") refuse(outcome);
        return c.json(readJson(outcome.secret, outcome.value));
      },
    },
    {
      method: "patch",
      path: `${base}/:key{.+}`,
      params: keyParam,
      summary: org
        ? "Only for secrets created with delete=false: ttl_seconds sets a new TTL from now; max_reads sets a new limit, resets read_count to 0 and reactivates a sealed secret. Neither: 400."
        : "Set a new TTL (from now) and/or a new read limit (read_count resets to 0).",
      permission: org ? "org:P" : "write",
      body: patchSecretBody,
      responses: {
        200: {
          description: `{${org ? "key" : "key | id"}, updated: true}`,
          schema: v.object({ ...(org ? { key: v.string() } : globalName), updated: v.literal(true) }),
        },
        400: { description: "neither field given, or invalid; or an invalid secret key" },
        404: { description: `missing, expired or burned${where}` },
        ...orgOnly({ 409: { description: "the secret was created with delete=true" } }),
      },
      handler: async (c) => {
        const key = pathKey(c);
        const body = await readBody(c, patchSecretBody);
        const origin = originOf(c);
        const patch = { ttlSeconds: body.ttl_seconds, maxReads: body.max_reads };
        const outcome = await inScope(c, (w, scope) => secrets.update(w, scope, key, patch, origin, { sealable: org }));
        if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
        return c.json(named(outcome.secret, { updated: true }));
      },
    },
    replaceRouteDecl(deps, scope),
    {
      method: "delete",
      path: `${base}/:key{.+}`,
      params: keyParam,
      summary: org ? "Delete an org secret (active or sealed) at once." : "Delete a secret at once, whatever its TTL or remaining reads.",
      permission: org ? "org:d" : "delete",
      responses: {
        200: { description: "{deleted: true}", schema: deleted },
        400: { description: "invalid secret key" },
        404: { description: `missing${where}` },
      },
      handler: async (c) => {
        const key = pathKey(c);
        const origin = originOf(c);
        const outcome = await inScope(c, (w, scope) => secrets.remove(w, scope, key, origin));
        if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
        return c.json({ deleted: true });
      },
    },
    {
      method: "post",
      path: org ? "/orgs/:org_id/prune" : "/prune",
      summary: org ? "Remove the tombstones of the org's expired secrets." : "Remove the tombstones of expired global secrets.",
      permission: org ? "org:C" : "admin",
      responses: { 200: { description: "{pruned}", schema: pruned }, ...noOrg },
      handler: async (c) => {
        const origin = originOf(c);
        const count = org
          ? await inScope(c, (w, orgId) => secrets.prune(w, orgId, origin))
          : await tx.run((w) => secrets.prune(w, GLOBAL_SCOPE, origin, keyPrefixOf(c)));
        return c.json({ pruned: count });
      },
    },
  ];
}

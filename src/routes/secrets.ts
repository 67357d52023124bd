import { Hono } from "hono";
import * as v from "valibot";
import type { AppEnv, AppContext } from "../context.js";
import { originOf } from "../context.js";
import { keyPrefixOf, need, requireInPrefix } from "../auth.js";
import { ApiError } from "../errors.js";
import { GLOBAL_SCOPE, MAX_READS_LIMIT, MAX_TTL_SECONDS } from "../domain/secrets.js";
import type { SecretLifecycle, SecretMeta } from "../domain/secrets.js";
import type { GroupCommit } from "../group-commit.js";
import {
  decodeCursor,
  intRange,
  pageQuery,
  parse,
  readBody,
  readJsonObject,
  requiredString,
  seconds,
} from "./input.js";
import { listSchema, pageBody, pageQueryDocs } from "./lists.js";
import { methodNotAllowed } from "./method.js";
import type { RouteDoc } from "../openapi.js";

/**
 * Secret keys (decisions.md section 2): 1-256 characters of
 * `A-Z a-z 0-9 . _ - ~ @ : + = /`, not starting with `/`.
 */
export const KEY_PATTERN = /^[A-Za-z0-9._~@:+=-][A-Za-z0-9._~@:+=/-]{0,255}$/;
/** Public secret ids: 64 lower-case hex characters, reserved in the global key space. */
export const PUBLIC_ID_PATTERN = /^[0-9a-f]{64}$/;

const keyField = v.pipe(
  requiredString("key"),
  v.regex(KEY_PATTERN, "key must be 1-256 characters of A-Z a-z 0-9 . _ - ~ @ : + = / and not start with /"),
  v.check((k) => !PUBLIC_ID_PATTERN.test(k), "key must not be 64 lower-case hex characters (reserved for public ids)"),
);

/** POST /secrets body (interface section 4, decisions.md sections 2-3). */
export const createSecretBody = v.object({
  key: v.optional(keyField),
  value: requiredString("value"),
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
});

/** PATCH /secrets/:key body: at least one of the two (decisions.md section 4). */
export const patchSecretBody = v.object({
  ttl_seconds: v.optional(intRange("ttl_seconds", 1, MAX_TTL_SECONDS)),
  max_reads: v.optional(intRange("max_reads", 1, MAX_READS_LIMIT)),
});

export interface SecretRouteDeps {
  secrets: SecretLifecycle;
  tx: GroupCommit;
  /** Base of public secrets' `url`, without a trailing slash; a function when known only once listening. */
  publicUrl: string | (() => string);
  maxValueBytes: number;
}

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
 * Checks a value's size in UTF-8 bytes against VAULT_MAX_VALUE_BYTES.
 * @throws ApiError 413.
 */
export function checkValueSize(value: string, maxBytes: number): void {
  if (Buffer.byteLength(value, "utf8") > maxBytes) {
    throw new ApiError(413, "value too large", { message: `the value may be at most ${maxBytes} bytes (UTF-8)` });
  }
}

const NOT_FOUND = "secret not found";

/** `{key}` or `{id}`, the name a secret goes by in responses. */
function nameOf(s: SecretMeta): { key: string } | { id: string } {
  return s.isPublic ? { id: s.key } : { key: s.key };
}

/**
 * The answer of a read, global or org: `{key | id, value, created_at,
 * expires_at, max_reads, read_count}`, read_count after this read, times in
 * Unix seconds. The only response that carries a value.
 * @param name `{key}`, or `{id}` for a public secret.
 */
export function readJson(name: { key: string } | { id: string }, s: SecretMeta, value: string) {
  return {
    ...name,
    value,
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  };
}

/** List metadata of a global secret: never the value. */
function listEntry(s: SecretMeta) {
  return {
    ...nameOf(s),
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  };
}

/**
 * Global secrets (interface section 4 "Global secrets"): thin handlers that
 * validate, authorize through need(), call the lifecycle inside the group
 * commit, and shape the response.
 */
export function secretRoutes(deps: SecretRouteDeps): Hono<AppEnv> {
  const { secrets, tx } = deps;
  const app = new Hono<AppEnv>();

  app.post("/secrets", need("write"), async (c) => {
    const raw = await readJsonObject(c);
    // Prefix scoping before validation (403 before 400); no key: a public secret.
    if (raw.key === undefined || typeof raw.key === "string") requireInPrefix(c, raw.key ?? null);
    const body = parse(createSecretBody, raw);
    checkValueSize(body.value, deps.maxValueBytes);
    const origin = originOf(c);
    const created = await tx.run(() =>
      secrets.create(
        { scope: GLOBAL_SCOPE, key: body.key, value: body.value, ttlSeconds: body.ttl_seconds, maxReads: body.max_reads },
        origin,
      ),
    );
    if (created.isPublic) {
      const base = typeof deps.publicUrl === "function" ? deps.publicUrl() : deps.publicUrl;
      return c.json({ id: created.key, url: `${base}/secrets/${created.key}` }, 201);
    }
    return c.json({ key: created.key }, 201);
  });

  app.get("/secrets", need("admin", "secret.listed"), async (c) => {
    const query = parse(pageQuery, c.req.query());
    const afterId = decodeCursor(query.cursor);
    const page = await tx.run(() => secrets.list(GLOBAL_SCOPE, { limit: query.limit ?? 1000, afterId, keyPrefix: keyPrefixOf(c) }));
    return c.json(pageBody("secrets", page.secrets.map(listEntry), page.nextAfterId));
  });
  // GET routes answer HEAD too, so HEAD is allowed (as on /keys and /audit).
  app.all("/secrets", methodNotAllowed(["GET", "HEAD", "POST"]));

  app.get("/secrets/:key{.+}", need("read", "secret.checked"), async (c) => {
    const key = pathKey(c);
    const origin = originOf(c);
    if (c.req.method === "HEAD") {
      // HEAD answers whether the secret exists, without reading it (no read counted).
      const found = await tx.run(() => secrets.peek(GLOBAL_SCOPE, key, origin));
      if (!found) throw new ApiError(404, NOT_FOUND);
      return c.body(null, 200);
    }
    const outcome = await tx.run(() => secrets.retrieve(GLOBAL_SCOPE, key, { principalKeyId: null }, origin));
    if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
    return c.json(readJson(nameOf(outcome.secret), outcome.secret, outcome.value));
  });

  app.patch("/secrets/:key{.+}", need("write"), async (c) => {
    const key = pathKey(c);
    const body = await readBody(c, patchSecretBody);
    const origin = originOf(c);
    const outcome = await tx.run(() =>
      secrets.update(GLOBAL_SCOPE, key, { ttlSeconds: body.ttl_seconds, maxReads: body.max_reads }, origin, {
        sealable: false,
      }),
    );
    if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
    return c.json({ ...nameOf(outcome.secret), updated: true });
  });

  app.delete("/secrets/:key{.+}", need("delete"), async (c) => {
    const key = pathKey(c);
    const origin = originOf(c);
    const outcome = await tx.run(() => secrets.remove(GLOBAL_SCOPE, key, origin));
    if (outcome.kind !== "ok") throw new ApiError(404, NOT_FOUND);
    return c.json({ deleted: true });
  });
  app.all("/secrets/:key{.+}", methodNotAllowed(["GET", "HEAD", "PATCH", "DELETE"]));

  app.post("/prune", need("admin"), async (c) => {
    const origin = originOf(c);
    const pruned = await tx.run(() => secrets.prune(GLOBAL_SCOPE, origin, keyPrefixOf(c)));
    return c.json({ pruned });
  });
  app.all("/prune", methodNotAllowed(["POST"]));

  return app;
}

const secretMetaSchema = {
  type: "object",
  required: ["created_at", "expires_at", "max_reads", "read_count"],
  properties: {
    key: { type: "string", description: "present for keyed secrets" },
    id: { type: "string", description: "present for public secrets (64 hex)" },
    created_at: { type: "integer" },
    expires_at: { type: ["integer", "null"] },
    max_reads: { type: ["integer", "null"] },
    read_count: { type: "integer" },
  },
};

/** OpenAPI description of the routes above. */
export const secretRouteDocs: RouteDoc[] = [
  {
    method: "post",
    path: "/secrets",
    summary: "Create a global secret: keyed when `key` is given, else public (a dead drop).",
    permission: "write",
    body: createSecretBody,
    responses: {
      201: {
        description: "Created. Keyed: {key}. Public: {id, url}.",
        schema: { type: "object", properties: { key: { type: "string" }, id: { type: "string" }, url: { type: "string" } } },
      },
      400: "invalid input",
      402: "free tier limit of 100 active secrets reached",
      409: "a live secret with this key exists",
      413: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB",
    },
  },
  {
    method: "get",
    path: "/secrets",
    summary: "List global secrets' metadata (never values), oldest first.",
    permission: "admin",
    query: pageQueryDocs,
    responses: {
      200: {
        description: "{secrets, next_cursor?}",
        schema: listSchema("secrets", secretMetaSchema),
      },
    },
  },
  {
    method: "get",
    path: "/secrets/{key}",
    summary:
      "Retrieve a secret's value and count the read. The read that reaches max_reads burns it. HEAD answers existence without counting a read.",
    permission: "read",
    responses: {
      200: {
        description: "{key | id, value, created_at, expires_at, max_reads, read_count}; read_count after this read",
        schema: {
          ...secretMetaSchema,
          required: [...secretMetaSchema.required, "value"],
          properties: { ...secretMetaSchema.properties, value: { type: "string" } },
        },
      },
      404: "missing, expired or burned",
    },
  },
  {
    method: "patch",
    path: "/secrets/{key}",
    summary: "Set a new TTL (from now) and/or a new read limit (read_count resets to 0).",
    permission: "write",
    body: patchSecretBody,
    responses: {
      200: { description: "{key | id, updated: true}", schema: { type: "object", properties: { updated: { const: true } } } },
      400: "neither field given, or invalid",
      404: "missing, expired or burned",
    },
  },
  {
    method: "delete",
    path: "/secrets/{key}",
    summary: "Delete a secret at once, whatever its TTL or remaining reads.",
    permission: "delete",
    responses: { 200: { description: "{deleted: true}", schema: { type: "object", properties: { deleted: { const: true } } } }, 404: "missing" },
  },
  {
    method: "post",
    path: "/prune",
    summary: "Remove the tombstones of expired global secrets.",
    permission: "admin",
    responses: { 200: { description: "{pruned}", schema: { type: "object", properties: { pruned: { type: "integer" } } } } },
  },
];

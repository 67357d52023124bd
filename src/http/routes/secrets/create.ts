import * as v from "valibot";
import { originOf } from "../../context.js";
import { GLOBAL_SCOPE } from "../../../domain/secrets/model.js";
import type { ResponseDecl, Route } from "../declare.js";
import { MAX_BODY_BYTES, route } from "../declare.js";
import { answerOnce } from "../idempotent.js";
import type { Answer } from "../idempotent.js";
import type { Awaitable, Work } from "../../../store/work.js";
import { byScope } from "../scope.js";
import { bodyKeyInPrefix, checkValueSize, createOrgSecretBody, createSecretBody, fileBody, fileMetaOf, revealCheckOf } from "./bodies.js";
import type { SecretRouteDeps, SecretScope } from "./secret-route.js";

/** The responses both scopes' creates share. */
const COMMON: Record<number, ResponseDecl> = {
  402: { description: "free tier limit of 100 active secrets reached" },
  413: { description: "value larger than VAULT_MAX_VALUE_BYTES, or body over 1 MiB" },
};

/**
 * POST /secrets (docs/api.md "Global secrets"): a keyed secret answers
 * 201 `{key}`; without `key` a public secret (a dead drop) answers 201
 * `{id, url}`. Prefix scoping reads the raw body's key first (403 before 400).
 * A public secret may carry a file envelope (docs/share.md, "Files"): its
 * body may then exceed 1 MiB, up to the envelope of VAULT_MAX_FILE_BYTES.
 */
function globalCreate(deps: SecretRouteDeps, s: SecretScope): Route {
  return route({
    method: "post",
    path: "/secrets",
    summary: "Create a global secret: keyed when `key` is given, else public (a dead drop).",
    permission: s.permission.create,
    idempotent: true,
    inPrefix: bodyKeyInPrefix,
    body: createSecretBody,
    largeBody: fileBody(deps.maxFileBytes),
    responses: Object.assign(
      {
        201: {
          description: "Created. Keyed: {key}. Public: {id, url, receipt}: receipt is the sender's capability on it (GET /receipts/<receipt>), shown once.",
          schema: v.union([
            v.object({ key: v.string() }),
            v.object({ id: v.string(), url: v.string(), receipt: v.pipe(v.string(), v.description("vrc_ + 54 base64url characters; shown once")) }),
          ]),
        },
        400: { description: "invalid input; reveal_check, max_failed_reveals or file_meta with a key; max_failed_reveals without reveal_check; file_meta without a file envelope" },
      },
      COMMON,
      {
        409: { description: "a live secret with this key exists" },
        413: { description: "value larger than VAULT_MAX_VALUE_BYTES, a public secret's file (envelope version 3) larger than VAULT_MAX_FILE_BYTES, or body over 1 MiB (a file's: over its envelope)" },
      },
    ),
    handler: async (c, { body }) => {
      const revealCheck = revealCheckOf(body);
      const fileMeta = fileMetaOf(body);
      // A public secret's file envelope is bounded by VAULT_MAX_FILE_BYTES instead (docs/share.md, "Files").
      checkValueSize(body.value, deps.maxValueBytes, body.key === undefined ? deps.maxFileBytes : undefined);
      const origin = originOf(c);
      const input = { scope: GLOBAL_SCOPE, key: body.key, value: body.value, ttlSeconds: body.ttl_seconds, maxReads: body.max_reads, revealCheck, fileMeta };
      const create = async (w: Work) => {
        const meta = await deps.secrets.create(w, input, origin);
        // A public secret comes with its receipt, in the same unit (docs/share.md, "Receipts").
        return { created: meta, receipt: meta.isPublic ? await deps.receipts.issue(w, meta) : undefined };
      };
      const render = ({ created, receipt }: Awaited<ReturnType<typeof create>>): Answer => {
        if (receipt === undefined) return [201, { key: created.key }];
        const url = typeof deps.publicUrl === "function" ? deps.publicUrl() : deps.publicUrl;
        return [201, { id: created.key, url: `${url}${deps.publicPath}${created.key}`, receipt }];
      };
      // A file's value (over 1 MiB) commits in a batch of its own: small requests never wait for its COMMIT (RunOptions).
      const alone = body.value.length > MAX_BODY_BYTES;
      return answerOnce(c, deps.idempotency, (fn) => deps.tx.run((w) => fn(w, GLOBAL_SCOPE), { alone }), create, render, body);
    },
  });
}

/**
 * POST /orgs/:org_id/secrets (docs/orgs.md "Org-scoped secrets"): the
 * creating principal owns it; `delete: false` seals it on its last read;
 * `allowed_keys` (repeats dropped) must be keys of the org (400).
 */
function orgCreate(deps: SecretRouteDeps, s: SecretScope): Route {
  return route({
    method: "post",
    path: "/orgs/:org_id/secrets",
    summary:
      "Create an org secret. delete=false seals it on its last read instead of burning it. allowed_keys: principal key ids of this org that may read it (and the master key); omitted: org-wide.",
    permission: s.permission.create,
    idempotent: true,
    inPrefix: bodyKeyInPrefix,
    body: createOrgSecretBody,
    responses: Object.assign(
      {
        201: { description: "{key}", schema: v.object({ key: v.string() }) },
        400: { description: "invalid input, or an allowed_keys id that is not a key of this org" },
      },
      COMMON,
      s.scope.missing,
      { 409: { description: "a live secret with this key exists in the org" } },
    ),
    handler: async (c, { body }) => {
      checkValueSize(body.value, deps.maxValueBytes);
      const actor = c.get("actor");
      const origin = originOf(c);
      const allowedKeys = body.allowed_keys ? [...new Set(body.allowed_keys)] : null;
      const create = async (w: Work, orgId: string) => {
        if (allowedKeys) await deps.principalKeys.checkAllowedKeys(w, orgId, allowedKeys);
        const input = {
          scope: orgId,
          key: body.key,
          value: body.value,
          ttlSeconds: body.ttl_seconds,
          maxReads: body.max_reads,
          burnOnLimit: body.delete !== false,
          ownerId: actor.kind === "principal" ? actor.principalId : null,
          allowedKeys,
        };
        return deps.secrets.create(w, input, origin);
      };
      const inUnit = <R,>(fn: (w: Work, scope: string) => Awaitable<R>): Promise<R> => deps.tx.run(async (w) => fn(w, await s.scope.scopeIn(w, c)));
      return answerOnce(c, deps.idempotency, inUnit, create, (created) => [201, { key: created.key }], body);
    },
  });
}

/** The create route of a scope: a public secret or a keyed one (global), an owned one (org). */
export function createRoute(deps: SecretRouteDeps, s: SecretScope): Route {
  return byScope(s.scope, { global: globalCreate, org: orgCreate })(deps, s);
}

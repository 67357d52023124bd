import * as v from "valibot";
import type { AppContext } from "../../context.js";
import type { Origin } from "../../../domain/events.js";
import type { PrincipalKeys } from "../../../domain/orgs/principal-keys.js";
import { PastTtl, PUBLIC_ID_PATTERN } from "../../../domain/secrets/model.js";
import type { Reader, SecretMeta } from "../../../domain/secrets/model.js";
import type { Receipts } from "../../../domain/receipts/receipts.js";
import type { IdempotencyKeys } from "../../../domain/idempotency/keys.js";
import { answerOnce } from "../idempotent.js";
import type { Answer } from "../idempotent.js";
import type { SecretLifecycle } from "../../../domain/secrets/lifecycle.js";
import type { Awaitable } from "../../../model/awaitable.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import { int, seconds } from "../answers.js";
import { invalidAs, route } from "../declare.js";
import type { ParamsSchema, PrefixRule, Route, RouteDecl, RoutePermission } from "../declare.js";
import { listSchema } from "../lists.js";
import type { RouteScope } from "../scope.js";
import { byScope, GLOBAL, inScope, ORG } from "../scope.js";

/**
 * What a secret route is, in both scopes (docs/api.md "Global secrets" and
 * "Replace a secret", docs/orgs.md "Org-scoped secrets"): what the routes
 * are built over (SecretRouteDeps), the key rule and the `{key}` path
 * parameter with its prefix rule, the JSON of a secret in answers and their
 * schemas, the rules of each scope (SecretScope), the head of a secret
 * route's declaration and the refusal path of its unit of work. The verbs
 * (one file each in this folder) and their request bodies (bodies.ts) are
 * built on it.
 */

/** What the secret routes need, built by app.ts. */
export interface SecretRouteDeps {
  secrets: SecretLifecycle;
  /** Receipts (docs/share.md, "Receipts"): a public secret is made with one. */
  receipts: Receipts;
  /** Idempotency keys (docs/api.md, "Retries"): a retry gets the first answer. */
  idempotency: IdempotencyKeys;
  /** Principal keys, to check an org secret's `allowed_keys` at creation. */
  principalKeys: PrincipalKeys;
  tx: UnitOfWork<Work>;
  /** Base of public secrets' `url`, without a trailing slash; a function when known only once listening. */
  publicUrl: string | (() => string);
  /** The path under it that names a public secret: `/s/` (the recipient page) or `/secrets/` (the API, without the pages). */
  publicPath: string;
  maxValueBytes: number;
  /** Largest file of an end-to-end public secret, bytes (VAULT_MAX_FILE_BYTES; docs/share.md "Files"). */
  maxFileBytes: number;
}

/**
 * The characters and length of a secret key (docs/api.md "Global secrets"):
 * 1-256 characters of `A-Z a-z 0-9 . _ - ~ @ : + = /`, not starting with `/`.
 * The segment rule is DOT_OR_EMPTY_SEGMENT; isSecretKey() and isKeyPrefix()
 * apply both.
 */
export const KEY_CHARS = /^[A-Za-z0-9._~@:+=-][A-Za-z0-9._~@:+=/-]{0,255}$/;

/**
 * A `/`-separated segment that is empty, `.` or `..` (a trailing `/` makes an
 * empty last segment): once a client joins the key into a URL path, the
 * URL parser resolves such a segment (and `%2e` forms of it), so the key
 * would name another route (docs/api.md "Global secrets").
 */
const DOT_OR_EMPTY_SEGMENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

/** The 400 message of a key that breaks the rule; it never repeats the key. */
export const KEY_RULE =
  "key must be 1-256 characters of A-Z a-z 0-9 . _ - ~ @ : + = /, must not start or end with /, and must have no empty, . or .. segment";

/** The 400 message of a scoped key's prefix that breaks the rule; it never repeats the prefix. */
export const PREFIX_RULE =
  "prefix must be 1-256 characters of A-Z a-z 0-9 . _ - ~ @ : + = /, must not start with /, and must have no empty, . or .. segment";

/** The key rule as the OpenAPI document states it (request bodies and `{key}` path parameters). */
export const KEY_DOC =
  "1 to 256 characters of A-Z a-z 0-9 . _ - ~ @ : + = /, not starting or ending with /, with no empty, . or .. segment (a key never names another route once joined into a path); in a path, %2F decodes to /";

/**
 * Whether `key` is a valid secret key, global or org (docs/api.md "Global
 * secrets"): KEY_CHARS, no empty, `.` or `..` segment, no trailing `/`. The
 * one home of the key rule: create bodies, path keys and (through
 * isKeyPrefix) scoped-key prefixes use it.
 * @param key the key as given (a path key after percent-decoding).
 */
export function isSecretKey(key: string): boolean {
  return KEY_CHARS.test(key) && !DOT_OR_EMPTY_SEGMENT.test(key);
}

/**
 * Whether `prefix` is a valid scoped-key prefix (docs/keys.md): a secret key,
 * or a secret key followed by one `/` (`prod/`). Its last segment may be a
 * partial one (`prod/db_`), but never `.` or `..`, and no segment is empty.
 * @param prefix the prefix as given in POST /keys.
 */
export function isKeyPrefix(prefix: string): boolean {
  return isSecretKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix);
}

/**
 * The `{key}` path parameter of the secret routes (docs/api.md "Global
 * secrets"): percent-decoded (`%2F` being `/`), a key of isSecretKey() or a
 * public id; else 400 `invalid secret key` with the rule as `message`, never
 * the key.
 * @param description the parameter's description in the OpenAPI document.
 */
export function keyParams(description: string) {
  return v.object({
    key: invalidAs(
      "invalid secret key",
      v.pipe(
        v.string(KEY_RULE),
        v.check((key) => isSecretKey(key) || PUBLIC_ID_PATTERN.test(key), KEY_RULE),
        v.description(description),
      ),
    ),
  });
}

/**
 * Prefix scoping of a path key (docs/keys.md "Prefix scoping"): checked
 * before the key is validated or looked up, so a prefix-scoped key gets 403
 * whether or not the secret exists; a public id is always out of reach.
 */
export const pathKeyInPrefix: PrefixRule = {
  from: "params",
  key: (params) => {
    const key = typeof params.key === "string" ? params.key : "";
    return PUBLIC_ID_PATTERN.test(key) ? null : key;
  },
};

/*
 * The response schemas of the secret routes, one family for both scopes:
 * global and org secrets differ only by fields (a global secret is `key` or,
 * public, `id`; an org secret has an owner, a state and its burn rule).
 * Times are Unix seconds.
 */

/** The metadata fields both scopes answer. */
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

/** A secret's name in a response: `{key}`, or `{id}` for a public secret. */
export type SecretName = { key: string } | { id: string };

/**
 * `fields` under the name a secret goes by in responses, the name first:
 * `{key, ...fields}`, or `{id, ...fields}` for a public secret.
 *
 * Not written as an object literal that starts with a spread and adds
 * properties after it (`{ ...nameOf(s), value }`): on Node.js 20 (V8 11.3)
 * such an object gets a map of its own with no transition back, so every
 * property added after the spread makes a new map, for every object built.
 * On the GET body that kept memory alive into the old generation, which
 * lengthened every scavenge pause and so the p99 (docs/performance-log.md,
 * round seven). Object.assign onto a fresh literal
 * follows the cached map transitions: every body of one kind shares a map
 * (test/http/object-shapes.test.ts).
 * @param s the secret (only `key` and `isPublic` are read).
 * @param fields the properties after the name, in answer order.
 */
export function named<T extends object>(s: SecretMeta, fields: T): SecretName & T {
  return Object.assign(s.isPublic ? { id: s.key } : { key: s.key }, fields);
}

/**
 * The metadata both scopes show, times in Unix seconds; never the value
 * (docs/contract.md §6: create, list and PATCH answers).
 */
export function metaJson(s: SecretMeta) {
  return named(s, {
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  });
}

/**
 * The answer of a read (docs/contract.md §6, GET /secrets/:key): the name,
 * the decrypted value and the metadata, `read_count` after this read.
 */
export function readJson(s: SecretMeta, value: string) {
  return named(s, {
    value,
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  });
}

/** An org secret's list entry: the metadata, its owner, state and burn rule (docs/contract.md §6). */
export function orgListEntry(s: SecretMeta) {
  return Object.assign(metaJson(s), { owner_id: s.ownerId, state: s.state, delete: s.burnOnLimit });
}

/**
 * The secret rules of one scope (docs/api.md "Global secrets", docs/orgs.md
 * "Org-scoped secrets"): one SecretLifecycle for both; global routes are
 * guarded by scoped-key permissions and prefixes (public secrets, no
 * sealing), org routes by role letters (allowed_keys, owners, sealing).
 */
export interface SecretScope {
  scope: RouteScope;
  /** The permission of each verb. */
  permission: Record<"create" | "list" | "read" | "patch" | "delete" | "prune", RoutePermission>;
  /** The `{key}` path parameter of GET, PATCH and DELETE (a global one may also be a public id). */
  keyDoc: string;
  /** Secrets that seal instead of burning (delete=false): lists include sealed ones, reads may answer 403/410, PATCH only such secrets. */
  sealable: boolean;
  /** A list entry and the schema of a page of them. */
  listEntry: (s: SecretMeta) => object;
  listSchema: v.GenericSchema;
  /** The schema of a read's answer. */
  readSchema: v.GenericSchema;
  /** The answer's name: `key`, or for a global secret `key | id`. */
  name: string;
}

/** The global key space. */
const GLOBAL_SECRETS: SecretScope = {
  scope: GLOBAL,
  permission: { create: "write", list: "admin", read: "read", patch: "write", delete: "delete", prune: "admin" },
  keyDoc: `${KEY_DOC}; or a public secret's id (64 lower-case hex characters)`,
  sealable: false,
  listEntry: metaJson,
  listSchema: globalPage,
  readSchema: globalRead,
  name: "key | id",
};

/** An organization's key space. */
const ORG_SECRETS: SecretScope = {
  scope: ORG,
  permission: { create: "org:c", list: "org:l", read: "org:r", patch: "org:P", delete: "org:d", prune: "org:C" },
  keyDoc: KEY_DOC,
  sealable: true,
  listEntry: orgListEntry,
  listSchema: orgPage,
  readSchema: orgRead,
  name: "key",
};

/** The secret rules of both scopes, global first. */
export const SECRET_SCOPES: readonly SecretScope[] = [GLOBAL_SECRETS, ORG_SECRETS];

/** `; or no such organization` for an org route's 404, else nothing. */
export function orNoOrg(s: SecretScope): string {
  return s.scope.missing[404] === undefined ? "" : "; or no such organization";
}

/** The reader for `allowed_keys`: the caller's principal key id, or null for every other token. */
export function readerOf(c: AppContext): Reader {
  const actor = c.get("actor");
  return { principalKeyId: actor.kind === "principal" ? actor.keyId : null };
}

/** The summary of a route in each scope. */
export interface ScopeSummaries {
  global: string;
  org: string;
}

/** The members of a secret route's declaration besides those the helpers below fill in. */
type RestOf<P extends ParamsSchema | undefined, Q extends ParamsSchema | undefined, B extends v.GenericSchema | undefined> = Omit<
  RouteDecl<P, Q, B>,
  "method" | "path" | "summary" | "params" | "inPrefix"
>;

/**
 * A secret route at `tail` under the scope's base path (e.g. `/prune`),
 * with the scope's summary; `rest` gives the other members.
 */
export function scopedRoute<Q extends ParamsSchema | undefined = undefined>(
  s: SecretScope,
  method: RouteDecl["method"],
  tail: string,
  summaries: ScopeSummaries,
  rest: RestOf<undefined, Q, undefined>,
): Route {
  return route<undefined, Q, undefined>(Object.assign({ method, path: `${s.scope.base}${tail}`, summary: byScope(s.scope, summaries) }, rest));
}

type KeyParams = ReturnType<typeof keyParams>;

/**
 * A route on one secret, `/secrets/:key{.+}` under the scope's base path:
 * its key parameter and the key-prefix rule on it, the scope's summary;
 * `rest` gives the other members.
 */
export function secretKeyRoute<B extends v.GenericSchema | undefined = undefined>(
  s: SecretScope,
  method: RouteDecl["method"],
  summaries: ScopeSummaries,
  rest: RestOf<KeyParams, undefined, B>,
): Route {
  const head = { method, path: `${s.scope.base}/secrets/:key{.+}`, summary: byScope(s.scope, summaries), params: keyParams(s.keyDoc), inPrefix: pathKeyInPrefix };
  return route<KeyParams, undefined, B>(Object.assign(head, rest));
}

/**
 * Runs `fn` in the request's scope (scope.ts inScope); a refusal it throws
 * is recorded by afterRefusal, then thrown again.
 * @returns what `fn` returns.
 * @throws what afterRefusal makes of the error (the ApiError answer).
 */
export async function refusable<T>(deps: SecretRouteDeps, s: SecretScope, c: AppContext, origin: Origin, fn: (w: Work, scopeId: string) => Awaitable<T>): Promise<T> {
  try {
    // A try block costs the successful request nothing; only a refusal takes the catch.
    return await inScope(deps.tx, s.scope, c, fn);
  } catch (err) {
    throw await afterRefusal(deps, err, origin);
  }
}

/**
 * refusable() once per Idempotency-Key (idempotent.ts answerOnce, docs/api.md
 * "Retries"): `fn`'s change in the request's scope, `render` its answer.
 * @param body the request's body as the route read it, for the key's request fingerprint.
 */
export function refusableOnce<T>(
  deps: SecretRouteDeps,
  s: SecretScope,
  c: AppContext,
  origin: Origin,
  fn: (w: Work, scopeId: string) => Awaitable<T>,
  render: (result: T) => Answer,
  body?: unknown,
): Promise<Response> {
  return answerOnce(c, deps.idempotency, (unit) => refusable(deps, s, c, origin, unit), fn, render, body);
}

/**
 * What a secret route (or the share page's reveal) does with a refusal of
 * its unit of work (VaultError, docs/architecture.md "How the domain
 * fails"): a secret refused because it is past its TTL (PastTtl) is expired
 * in a unit of its own first, so the expiry is recorded before the 404 is
 * answered. Any other error is handed back as it is.
 * @returns `err`, for the caller to throw.
 */
export async function afterRefusal(deps: Pick<SecretRouteDeps, "tx" | "secrets">, err: unknown, origin: Origin): Promise<unknown> {
  if (err instanceof PastTtl) await deps.tx.run((w) => deps.secrets.expireKey(w, err.scope, err.key, origin));
  return err;
}

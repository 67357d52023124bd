/**
 * The permission model of org routes, as one table (docs/contract.md
 * §8). Each row is a route; each column a caller; each
 * cell the status that caller gets. Every cell runs against a fresh vault.
 *
 * Callers:
 *   none     no Authorization header
 *   master   the master key: everything, org routes included
 *   reader   built-in role reader  rRl             r l
 *   writer   built-in role writer  rRlLcCpP        r l c C P
 *   admin    built-in role admin   rRlLcCpPaAmM    r l c C P a M
 *   owner    built-in role owner   rRlLcCpPaAmMdD  r l c C P a M d
 *   custom   custom role janitor   lCdRLAD         l C d   (R L A D are reserved: they grant nothing)
 *   other    an owner of ANOTHER org: 403 on this org's paths, its own /me works
 *   scoped   a scoped API key with admin: global routes only, 403 on org routes and /me
 *   expired  an owner key past its valid_before: 401
 *   early    an owner key before its valid_after: 401
 *   revoked  a revoked owner key: 401
 *
 * Role letters: r read (GET/HEAD a secret), l list, c create, P patch,
 * d delete, C prune, a audit, M webhooks. Management of orgs, principals,
 * roles and principal keys is the master key's alone; /me is for principal
 * keys alone. Check order: 401, then 403, then 400/413, then 404/409/410.
 */
import type { Awaitable, Work } from "../../../src/store/work.js";
import { describe, expect, it } from "vitest";
import { MASTER_KEY, buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import type { Origin } from "../../../src/domain/events.js";

const ACTORS = ["none", "master", "reader", "writer", "admin", "owner", "custom", "other", "scoped", "expired", "early", "revoked"] as const;
type ActorName = (typeof ACTORS)[number];

interface Row {
  method: string;
  path: string;
  body: unknown;
  expected: Record<ActorName, number>;
}

function row(method: string, path: string, body: unknown, statuses: string): Row {
  const codes = statuses.trim().split(/\s+/).map(Number);
  if (codes.length !== ACTORS.length) throw new Error(`${method} ${path}: ${codes.length} cells, want ${ACTORS.length}`);
  const expected = Object.fromEntries(ACTORS.map((a, i) => [a, codes[i]])) as Record<ActorName, number>;
  return { method, path, body, expected };
}

const NO_BODY = undefined;
const HOOK = { url: "https://127.0.0.1/hook", events: ["*"] };

// prettier-ignore
const TABLE: Row[] = [
  //                                                                                                  none mast read writ admn ownr cust othr scop expd erly revk
  // Organizations, principals, roles, principal keys: master key only.
  row("POST",   "/orgs",                                            { name: "new org" },                "401  201  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs",                                            NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}",                                      NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{empty}",                                    NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("POST",   "/orgs/{org}/principals",                           { name: "new", role: "reader" },    "401  201  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/principals",                           NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/principals/{target}",                  NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("PATCH",  "/orgs/{org}/principals/{target}",                  { name: "renamed" },                "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{org}/principals/{target}",                  NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("POST",   "/orgs/{org}/principals/{target}/keys",             { name: "first key" },              "401  201  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/principals/{target}/keys",             NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{org}/principals/{ownerId}/keys/{spareKey}", NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("POST",   "/orgs/{org}/roles",                                { name: "new-role", permissions: "r" }, "401  201  403  403  403  403  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/roles",                                NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("PATCH",  "/orgs/{org}/roles/spare",                          { permissions: "rl" },              "401  200  403  403  403  403  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{org}/roles/spare",                          NO_BODY,                            "401  200  403  403  403  403  403  403  403  401  401  401"),
  // The current principal: principal keys only.
  row("GET",    "/me",                                              NO_BODY,                            "401  403  200  200  200  200  200  200  403  401  401  401"),
  row("PATCH",  "/me",                                              { metadata: { a: 1 } },             "401  403  200  200  200  200  200  200  403  401  401  401"),
  row("POST",   "/me/keys",                                         { name: "another" },                "401  403  201  201  201  201  201  201  403  401  401  401"),
  row("DELETE", "/me/keys/{self}",                                  NO_BODY,                            "401  403  200  200  200  200  200  200  403  401  401  401"),
  // Org-scoped secrets: the role letter in brackets.
  row("POST",   "/orgs/{org}/secrets",           /* c */            { key: "new", value: "v" },         "401  201  403  201  201  201  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/secrets",           /* l */            NO_BODY,                            "401  200  200  200  200  200  200  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/secrets/s",         /* r */            NO_BODY,                            "401  200  200  200  200  200  403  403  403  401  401  401"),
  row("HEAD",   "/orgs/{org}/secrets/s",         /* r */            NO_BODY,                            "401  200  200  200  200  200  403  403  403  401  401  401"),
  row("PATCH",  "/orgs/{org}/secrets/s",         /* P */            { max_reads: 5 },                   "401  200  403  200  200  200  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{org}/secrets/s",         /* d */            NO_BODY,                            "401  200  403  403  403  200  200  403  403  401  401  401"),
  row("POST",   "/orgs/{org}/prune",             /* C */            NO_BODY,                            "401  200  403  200  200  200  200  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/audit",             /* a */            NO_BODY,                            "401  200  403  403  200  200  403  403  403  401  401  401"),
  row("POST",   "/orgs/{org}/webhooks",          /* M */            HOOK,                               "401  201  403  403  201  201  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/webhooks",          /* M */            NO_BODY,                            "401  200  403  403  200  200  403  403  403  401  401  401"),
  row("DELETE", "/orgs/{org}/webhooks/{hook}",   /* M */            NO_BODY,                            "401  200  403  403  200  200  403  403  403  401  401  401"),
  row("GET",    "/orgs/{org}/webhooks/{hook}/deliveries", /* M */   NO_BODY,                            "401  200  403  403  200  200  403  403  403  401  401  401"),
  // Global routes: never for principal keys.
  row("POST",   "/secrets",                                         { key: "g2", value: "v" },          "401  201  403  403  403  403  403  403  201  401  401  401"),
  row("GET",    "/secrets",                                         NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
  row("GET",    "/secrets/g",                                       NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
  row("POST",   "/prune",                                           NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
  row("GET",    "/audit",                                           NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
  row("GET",    "/keys",                                            NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
  row("GET",    "/webhooks",                                        NO_BODY,                            "401  200  403  403  403  403  403  403  200  401  401  401"),
];

const BY_MASTER: Origin = { actor: "master", principalId: null, ip: null };

interface World {
  v: TestVault;
  tokens: Record<ActorName, string | null>;
  params: Record<string, string>;
}

/**
 * The world every cell starts from, built through the domain modules (fast
 * and independent of the routes under test): org `acme` with one principal
 * per role, a custom role `janitor` and an unassigned custom role `spare`,
 * a principal `target` without keys, an owner's spare key, a sealable
 * secret `s` and a webhook; an `other` org with its owner; an `empty` org;
 * a global secret `g`; a scoped admin key.
 */
async function buildWorld(): Promise<World> {
  const v = buildTestVault({ webhooks: { allowPrivate: true } });
  const { orgs, roles, principals, principalKeys } = v.orgs;
  // One unit of work per step, as the routes do.
  const run = <T>(fn: (w: Work) => Awaitable<T>) => v.tx.run(fn);
  const org = (await run((w) => orgs.create(w, "acme", undefined, BY_MASTER))).id;
  const other = (await run((w) => orgs.create(w, "other", undefined, BY_MASTER))).id;
  const empty = (await run((w) => orgs.create(w, "empty", undefined, BY_MASTER))).id;
  await run((w) => roles.create(w, org, "janitor", "lCdRLAD", BY_MASTER));
  await run((w) => roles.create(w, org, "spare", "r", BY_MASTER));
  const member = async (orgId: string, role: string, name = role) => {
    const p = await run((w) => principals.create(w, orgId, name, role, BY_MASTER));
    const k = await run((w) => principalKeys.create(w, orgId, p.id, { name: "key" }, BY_MASTER));
    return { id: p.id, keyId: k.key.id, token: k.token };
  };
  const reader = await member(org, "reader");
  const writer = await member(org, "writer");
  const admin = await member(org, "admin");
  const owner = await member(org, "owner");
  const custom = await member(org, "janitor");
  const stranger = await member(other, "owner");
  const target = (await run((w) => principals.create(w, org, "target", "reader", BY_MASTER))).id;
  const spareKey = (await run((w) => principalKeys.create(w, org, owner.id, { name: "spare" }, BY_MASTER))).key.id;
  const now = v.clock.now();
  const expired = (await run((w) => principalKeys.create(w, org, owner.id, { name: "expiring", validBefore: now + 60_000 }, BY_MASTER))).token;
  const early = (await run((w) => principalKeys.create(w, org, owner.id, { name: "later", validAfter: now + 86_400_000 }, BY_MASTER))).token;
  const revoked = await run((w) => principalKeys.create(w, org, owner.id, { name: "revoked" }, BY_MASTER));
  await run((w) => principalKeys.revoke(w, owner.id, revoked.key.id, BY_MASTER));
  v.clock.advance(120_000);
  await run((w) => v.secrets.create(w, { scope: org, key: "s", value: "v", burnOnLimit: false }, BY_MASTER));
  await run((w) => v.secrets.create(w, { scope: "global", key: "g", value: "v" }, BY_MASTER));
  const hook = (
    await run((w) =>
      v.webhooks.registry.create(w, { orgId: org, url: "https://127.0.0.1/hook", events: ["*"], description: null, keyPrefix: null }, BY_MASTER),
    )
  ).webhook.id;
  const scoped = (await run((w) => v.scopedKeys.create(w, { name: "ci", permissions: ["admin"], prefix: null, expiresAt: null }, null, BY_MASTER))).token;
  const selfKeys: Record<ActorName, string> = {
    none: spareKey, master: spareKey, scoped: spareKey, expired: spareKey, early: spareKey, revoked: spareKey,
    reader: reader.keyId, writer: writer.keyId, admin: admin.keyId, owner: owner.keyId, custom: custom.keyId, other: stranger.keyId,
  };
  return {
    v,
    tokens: {
      none: null,
      master: MASTER_KEY,
      reader: reader.token,
      writer: writer.token,
      admin: admin.token,
      owner: owner.token,
      custom: custom.token,
      other: stranger.token,
      scoped,
      expired,
      early,
      revoked: revoked.token,
    },
    params: { org, empty, target, ownerId: owner.id, spareKey, hook, ...Object.fromEntries(ACTORS.map((a) => [`self:${a}`, selfKeys[a]])) },
  };
}

function fill(path: string, params: Record<string, string>, actor: ActorName): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = name === "self" ? params[`self:${actor}`] : params[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return value;
  });
}

describe("authorization of org routes: one table", () => {
  for (const r of TABLE) {
    describe(`${r.method} ${r.path}`, () => {
      for (const actor of ACTORS) {
        const status = r.expected[actor];
        it(`${actor} -> ${status}`, async () => {
          const world = await buildWorld();
          const token = world.tokens[actor];
          const res = await world.v.request(r.method, fill(r.path, world.params, actor), { token, body: r.body });
          const text = await res.text();
          expect(res.status, text).toBe(status);
          if (status >= 400 && r.method !== "HEAD") expect(typeof (JSON.parse(text) as { error?: unknown }).error).toBe("string");
        });
      }
    });
  }
});

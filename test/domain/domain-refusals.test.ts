/**
 * How the domain fails (docs/architecture.md "How the domain fails"): each
 * refusal is a thrown VaultError of the documented kind, one family each
 * (secrets, scoped keys, principal keys, webhooks); a method returns only
 * its success value, and a refused unit of work changes nothing. A secret
 * found past its TTL is refused (PastTtl, 404) and expired by the caller in
 * a unit of its own, before the answer.
 */
import { describe, expect, it } from "vitest";
import { VaultError } from "../../src/model/errors.js";
import type { VaultErrorKind } from "../../src/model/errors.js";
import { SYSTEM_ORIGIN } from "../../src/domain/events.js";
import { GLOBAL_SCOPE, PastTtl } from "../../src/domain/secrets/model.js";
import type { Awaitable, Work } from "../../src/store/work.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

const MASTER = { principalKeyId: null };
const GLOBAL_VIEW = { orgId: null, viewerPrefix: null };

/** The refusal `p` rejects with; fails the test when it resolves or rejects with anything else. */
async function refusal(p: Promise<unknown>): Promise<VaultError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  return err as VaultError;
}

/** `{kind, error, message?}` of a refusal, to compare in one assertion. */
async function refused(p: Promise<unknown>): Promise<{ kind: VaultErrorKind; error: string; message?: string }> {
  const err = await refusal(p);
  return Object.assign({ kind: err.kind, error: err.error }, err.options.message === undefined ? {} : { message: err.options.message });
}

function runner(v: TestVault) {
  return <T>(fn: (w: Work) => Awaitable<T>): Promise<T> => v.tx.run(fn);
}

async function stateOf(v: TestVault, key: string): Promise<unknown> {
  return (await v.query("SELECT state FROM secrets WHERE scope = ? AND key = ?", GLOBAL_SCOPE, key))[0]?.state;
}

describe("secrets: refusals are VaultErrors", () => {
  it("a read refuses not_found, forbidden and gone; a change refuses not_found", async () => {
    const v = buildTestVault();
    const run = runner(v);
    expect(await refused(run((w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "nope", MASTER, SYSTEM_ORIGIN)))).toEqual({
      kind: "not_found",
      error: "secret not found",
    });
    await run((w) => v.secrets.create(w, { scope: "org_x", key: "k", value: "v", maxReads: 1, burnOnLimit: false, allowedKeys: ["pk_a"] }, SYSTEM_ORIGIN));
    expect(await refused(run((w) => v.secrets.retrieve(w, "org_x", "k", { principalKeyId: "pk_b" }, SYSTEM_ORIGIN)))).toEqual({
      kind: "forbidden",
      error: "this key is not in the secret's allowed_keys",
    });
    const read = await run((w) => v.secrets.retrieve(w, "org_x", "k", { principalKeyId: "pk_a" }, SYSTEM_ORIGIN));
    expect(read.value).toBe("v");
    expect(await refused(run((w) => v.secrets.retrieve(w, "org_x", "k", MASTER, SYSTEM_ORIGIN)))).toEqual({
      kind: "gone",
      error: "secret sealed",
      message: "its reads are exhausted; PATCH max_reads to reactivate it",
    });
    expect((await refusal(run((w) => v.secrets.check(w, "org_x", "k", MASTER)))).kind).toBe("gone");
    expect((await refusal(run((w) => v.secrets.update(w, GLOBAL_SCOPE, "nope", { ttlSeconds: 5 }, SYSTEM_ORIGIN, { sealable: false })))).kind).toBe("not_found");
    expect((await refusal(run((w) => v.secrets.remove(w, GLOBAL_SCOPE, "nope", SYSTEM_ORIGIN)))).kind).toBe("not_found");
  });

  it("a secret past its TTL is refused with PastTtl and left as it was; expireKey then expires it", async () => {
    const v = buildTestVault();
    const run = runner(v);
    await run((w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "ttl", value: "v", ttlSeconds: 1 }, SYSTEM_ORIGIN));
    v.clock.advance(1_000);
    const err = await refusal(run((w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "ttl", MASTER, SYSTEM_ORIGIN)));
    expect(err).toBeInstanceOf(PastTtl);
    expect(err).toMatchObject({ kind: "not_found", error: "secret not found", scope: GLOBAL_SCOPE, key: "ttl" });
    expect(await stateOf(v, "ttl")).toBe("active");
    await run((w) => v.secrets.expireKey(w, GLOBAL_SCOPE, "ttl", SYSTEM_ORIGIN));
    expect(await stateOf(v, "ttl")).toBe("expired");
  });

  it("over HTTP a read of a secret past its TTL answers 404 and the expiry is recorded before the answer", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "ttl", value: "v", ttl_seconds: 1 })).status).toBe(201);
    v.clock.advance(1_000);
    const res = await v.asMaster("GET", "/secrets/ttl");
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "secret not found" });
    expect(await stateOf(v, "ttl")).toBe("expired");
    const actions = (await v.query("SELECT action FROM audit WHERE key = ? ORDER BY id", "ttl")).map((r) => r.action);
    expect(actions).toContain("secret.expired");
  });

  it("HEAD, PATCH and DELETE of a secret past its TTL answer 404 and expire it too", async () => {
    const v = buildTestVault();
    const calls: [string, unknown][] = [
      ["HEAD", undefined],
      ["PATCH", { ttl_seconds: 60 }],
      ["DELETE", undefined],
    ];
    for (const [method, body] of calls) {
      const key = `ttl-${method.toLowerCase()}`;
      expect((await v.asMaster("POST", "/secrets", { key, value: "v", ttl_seconds: 1 })).status).toBe(201);
      v.clock.advance(1_000);
      expect((await v.asMaster(method, `/secrets/${key}`, body)).status).toBe(404);
      expect(await stateOf(v, key)).toBe("expired");
    }
  });
});

describe("scoped keys: refusals are VaultErrors", () => {
  it("remove refuses not_found and forbidden; lookup refuses an expired token, and answers undefined for an unknown one", async () => {
    const v = buildTestVault();
    const run = runner(v);
    expect(await refused(run((w) => v.scopedKeys.remove(w, "sk_nope", null, SYSTEM_ORIGIN)))).toEqual({ kind: "not_found", error: "key not found" });
    const made = await run((w) =>
      v.scopedKeys.create(w, { name: "ci", permissions: ["read"], prefix: "ci/", expiresAt: v.clock.now() + 1_000 }, null, SYSTEM_ORIGIN),
    );
    expect(await refused(run((w) => v.scopedKeys.remove(w, made.key.id, "prod/", SYSTEM_ORIGIN)))).toEqual({
      kind: "forbidden",
      error: "this key is outside your key's prefix",
    });
    expect((await run((w) => v.scopedKeys.lookup(w, made.token)))?.id).toBe(made.key.id);
    expect(await run((w) => v.scopedKeys.lookup(w, "vsk_unknown"))).toBeUndefined();
    v.clock.advance(1_000);
    expect(await refused(run((w) => v.scopedKeys.lookup(w, made.token)))).toEqual({ kind: "unauthorized", error: "token expired" });
  });
});

describe("principal keys: refusals are VaultErrors", () => {
  it("lookup refuses a key not yet valid and an expired one (401 texts); revoke refuses an unknown key", async () => {
    const v = buildTestVault();
    const run = runner(v);
    const { orgs, principals, principalKeys } = v.orgs;
    const org = (await run((w) => orgs.create(w, "acme", undefined, SYSTEM_ORIGIN))).id;
    const p = (await run((w) => principals.create(w, org, "ci", "reader", SYSTEM_ORIGIN))).id;
    const now = v.clock.now();
    const made = await run((w) => principalKeys.create(w, org, p, { name: "k", validAfter: now + 1_000, validBefore: now + 2_000 }, SYSTEM_ORIGIN));
    expect(await refused(run((w) => principalKeys.lookup(w, made.token)))).toEqual({ kind: "unauthorized", error: "this key is not valid yet" });
    v.clock.advance(1_500);
    expect(await run((w) => principalKeys.lookup(w, made.token))).toMatchObject({ keyId: made.key.id, orgId: org, letters: "rRl" });
    v.clock.advance(1_000);
    expect(await refused(run((w) => principalKeys.lookup(w, made.token)))).toEqual({ kind: "unauthorized", error: "this key has expired" });
    expect(await run((w) => principalKeys.lookup(w, "vpk_unknown"))).toBeUndefined();
    expect(await refused(run((w) => principalKeys.revoke(w, p, "pk_nope", SYSTEM_ORIGIN)))).toEqual({ kind: "not_found", error: "key not found" });
  });
});

describe("webhooks: refusals are VaultErrors", () => {
  it("rotate, sendTest, remove and attempts refuse a webhook the viewer does not see", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const run = runner(v);
    const { registry } = v.webhooks;
    const hook = await run((w) =>
      registry.create(w, { orgId: null, url: "https://hooks.example/in", events: ["*"], description: null, keyPrefix: "ci/" }, SYSTEM_ORIGIN),
    );
    const other = { orgId: null, viewerPrefix: "prod/" };
    const notFound = { kind: "not_found", error: "webhook not found" };
    expect(await refused(run((w) => registry.rotate(w, other, hook.webhook.id, SYSTEM_ORIGIN)))).toEqual(notFound);
    expect(await refused(run((w) => registry.sendTest(w, other, hook.webhook.id, SYSTEM_ORIGIN)))).toEqual(notFound);
    expect(await refused(run((w) => registry.attempts(w, other, hook.webhook.id, { limit: 10 })))).toEqual(notFound);
    expect(await refused(run((w) => registry.remove(w, other, hook.webhook.id, SYSTEM_ORIGIN)))).toEqual(notFound);
    expect(await refused(run((w) => registry.remove(w, GLOBAL_VIEW, "wh_nope", SYSTEM_ORIGIN)))).toEqual(notFound);
    // The refusals changed nothing: the viewer who sees it still can remove it.
    await run((w) => registry.remove(w, GLOBAL_VIEW, hook.webhook.id, SYSTEM_ORIGIN));
    expect(await run((w) => registry.get(w, GLOBAL_VIEW, hook.webhook.id))).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../src/crypto/cipher.js";
import { VaultError } from "../src/domain/errors.js";
import type { EventSink, Origin, SecretEvent } from "../src/domain/events.js";
import { SecretLifecycle } from "../src/domain/secrets.js";
import { afterRefusal } from "../src/http/routes/secrets/rules.js";
import { GLOBAL_SCOPE } from "../src/domain/secret-model.js";
import type { Awaitable, UnitOfWork, Work } from "../src/store/work.js";
import { createLogger } from "../src/ops/log.js";
import { SWEEP_BATCH, startSweeper } from "../src/ops/sweeper.js";
import { buildTestVault, buildTestWork, fakeClock } from "./helpers.js";
import type { FakeClock, TestVault } from "./helpers.js";

const ORIGIN: Origin = { actor: "master", principalId: null, ip: "127.0.0.1" };
const READER = { principalKeyId: null };
/** An org scope: the lifecycle is the same, only the scope column differs. */
const ORG = "org_lifecycletest";

/** Runs a lifecycle call in the group commit, as the routes do. */
function inTx<T>(tx: UnitOfWork<Work>, fn: (w: Work) => Awaitable<T>): Promise<T> {
  return tx.run(fn);
}

interface Recorded {
  events: SecretEvent[];
  pruned: { scope: string; count: number }[];
}

/**
 * A lifecycle of our own, with an EventSink that records what it is given, over
 * the engine under test (buildTestWork: SQLite's group commit, or PostgreSQL in pg-matrix).
 */
function recordingLifecycle(options: { activeLimit?: number | null } = {}): {
  secrets: SecretLifecycle;
  tx: UnitOfWork<Work>;
  query: TestVault["query"];
  clock: FakeClock;
  recorded: Recorded;
} {
  const clock = fakeClock();
  const recorded: Recorded = { events: [], pruned: [] };
  const events: EventSink = {
    secretEvent: (_w, event) => {
      recorded.events.push(structuredClone(event));
    },
    secretsPruned: (_w, scope, count) => {
      recorded.pruned.push({ scope, count });
    },
  };
  const limit = options.activeLimit ?? null;
  const cipher = new ValueCipher(generateRootKey());
  const secrets = new SecretLifecycle({
    cipher,
    events,
    now: clock.now,
    activeLimit: () => limit,
  });
  const { tx, query } = buildTestWork(cipher);
  return { secrets, tx, query, clock, recorded };
}

/** The stored row of a secret (the tests use it where the key has one row), read on either engine. */
async function rawRow(db: { query: TestVault["query"] }, scope: string, key: string) {
  return (await db.query("SELECT * FROM secrets WHERE scope = ? AND key = ?", scope, key))[0] as
    | { state: string; ciphertext: Buffer | null; read_count: number; max_reads: number | null; expires_at: number | null }
    | undefined;
}

/** A count on either engine: `SELECT count(*) AS n ...` -> n. */
async function countOf(v: { query: TestVault["query"] }, sql: string): Promise<number> {
  return (await v.query(sql))[0]?.n as number;
}

/**
 * A lifecycle call as the routes make it: "ok", or the kind of its refusal
 * (VaultError), after afterRefusal (a secret refused past its TTL is
 * expired in a unit of its own, http/routes/secrets/rules.ts).
 */
async function outcomeOf<T>(v: { tx: UnitOfWork<Work>; secrets: SecretLifecycle }, fn: (w: Work) => Awaitable<T>): Promise<string> {
  try {
    await v.tx.run(fn);
    return "ok";
  } catch (err) {
    await afterRefusal(v, err, ORIGIN);
    if (!(err instanceof VaultError)) throw err;
    return err.kind;
  }
}

async function expectVaultError(p: Promise<unknown>, kind: string): Promise<VaultError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  expect((err as VaultError).kind).toBe(kind);
  return err as VaultError;
}

describe("SecretLifecycle: create and read", () => {
  it("creates a keyed secret, active, with its times in milliseconds", async () => {
    const v = buildTestVault();
    const s = await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "db/pass", value: "hunter2", ttlSeconds: 60, maxReads: 3 }, ORIGIN),
    );
    expect(s).toMatchObject({
      scope: GLOBAL_SCOPE,
      key: "db/pass",
      isPublic: false,
      state: "active",
      createdAt: v.clock.now(),
      expiresAt: v.clock.now() + 60_000,
      maxReads: 3,
      readCount: 0,
      burnOnLimit: true,
    });
  });

  it("creates a public secret with a 64-hex id", async () => {
    const v = buildTestVault();
    const s = await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "drop" }, ORIGIN));
    expect(s.isPublic).toBe(true);
    expect(s.key).toMatch(/^[0-9a-f]{64}$/);
    expect(s.expiresAt).toBeNull();
    expect(s.maxReads).toBeNull();
    const read = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, s.key, READER, ORIGIN));
    expect(read).toMatchObject({ value: "drop" });
  });

  it("counts each read and returns the count after it", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    for (let i = 1; i <= 3; i++) {
      const r = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
      expect(r.secret.readCount).toBe(i);
    }
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.read_count).toBe(3);
  });

  it("stores only ciphertext, never the value", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "plain-text-value" }, ORIGIN));
    const row = await rawRow(v, GLOBAL_SCOPE, "k");
    expect(row?.ciphertext).toBeInstanceOf(Buffer);
    expect(row?.ciphertext?.toString("latin1")).not.toContain("plain-text-value");
  });

  it("answers not_found for a key that does not exist", async () => {
    const v = buildTestVault();
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "nope", READER, ORIGIN))).toBe("not_found");
  });

  it("keeps scopes apart: the same key in two scopes is two secrets", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "global" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "org" }, ORIGIN));
    const g = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const o = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(g).toMatchObject({ value: "global" });
    expect(o).toMatchObject({ value: "org" });
  });
});

describe("SecretLifecycle: read limits", () => {
  it("burns the secret on the read that reaches max_reads", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 2 }, ORIGIN));
    const first = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(first).toMatchObject({ value: "v", secret: { readCount: 1, state: "active" } });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeDefined();
    const last = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(last).toMatchObject({ value: "v", secret: { readCount: 2, maxReads: 2 } });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
  });

  it("seals instead of burning when burnOnLimit is false, and later reads answer sealed", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    const last = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(last).toMatchObject({ value: "v", secret: { readCount: 1, state: "sealed" } });
    expect((await rawRow(v, ORG, "k"))?.state).toBe("sealed");
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toBe("gone");
    expect((await rawRow(v, ORG, "k"))?.read_count).toBe(1);
    // a sealed secret still exists for HEAD and for org lists
    expect(await inTx(v.tx, (w) => v.secrets.peek(w, ORG, "k", ORIGIN))).toMatchObject({ state: "sealed" });
    const withSealed = await inTx(v.tx, (w) => v.secrets.list(w, ORG, { limit: 10, includeSealed: true }));
    expect(withSealed.secrets.map((s) => [s.key, s.state])).toEqual([["k", "sealed"]]);
    const activeOnly = await inTx(v.tx, (w) => v.secrets.list(w, ORG, { limit: 10 }));
    expect(activeOnly.secrets).toEqual([]);
  });

  it("checks allowed_keys: another principal key is forbidden, a listed key and the master key may read", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: ORG, key: "k", value: "v", allowedKeys: ["pk_allowed"], ownerId: "prn_owner" }, ORIGIN),
    );
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", { principalKeyId: "pk_other" }, ORIGIN))).toBe("forbidden");
    // the refused read did not count
    expect((await rawRow(v, ORG, "k"))?.read_count).toBe(0);
    const allowed = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", { principalKeyId: "pk_allowed" }, ORIGIN));
    expect(allowed).toMatchObject({ value: "v", secret: { allowedKeys: ["pk_allowed"], ownerId: "prn_owner" } });
    const master = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(master).toMatchObject({ value: "v", secret: { readCount: 2 } });
  });
});

describe("SecretLifecycle: TTL", () => {
  it("never returns a secret past its TTL, even before the sweeper ran: the read destroys it", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 10 }, ORIGIN));
    v.clock.advance(9_999);
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("ok");
    v.clock.advance(1);
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
    const row = await rawRow(v, GLOBAL_SCOPE, "k");
    expect(row?.state).toBe("expired");
    expect(row?.ciphertext).toBeNull();
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
  });

  it("leaves a tombstone that is not listed and not counted active; prune removes and counts it", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "gone", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "stays", value: "v" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.countActive(w))).toBe(2);
    v.clock.advance(1_000);
    // expired but not swept: already not listed and not counted
    expect(await inTx(v.tx, (w) => v.secrets.countActive(w))).toBe(1);
    const listed = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 10 }));
    expect(listed.secrets.map((s) => s.key)).toEqual(["stays"]);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 100, ORIGIN))).toBe(1);
    expect(await rawRow(v, GLOBAL_SCOPE, "gone")).toMatchObject({ state: "expired", ciphertext: null });
    expect(await inTx(v.tx, (w) => v.secrets.countActive(w))).toBe(1);
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(1);
    expect(await rawRow(v, GLOBAL_SCOPE, "gone")).toBeUndefined();
    expect(await rawRow(v, GLOBAL_SCOPE, "stays")).toBeDefined();
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(0);
  });

  it("prune expires what is due first, and counts it", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "a", value: "v", ttlSeconds: 5 }, ORIGIN));
    v.clock.advance(5_000);
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(1);
    expect(await countOf(v, "SELECT count(*) AS n FROM secrets")).toBe(0);
  });

  it("prunes only its own scope", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "a", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "a", value: "v", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(2_000);
    await inTx(v.tx, (w) => v.secrets.expireDue(w, 100, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(1);
    expect((await rawRow(v, ORG, "a"))?.state).toBe("expired");
  });

  it("a prefix-scoped prune expires and removes only secrets under its prefix", async () => {
    const rec = recordingLifecycle();
    const { secrets, tx, clock, recorded } = rec;
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "ci/a", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "prod/a", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, value: "v", ttlSeconds: 1 }, ORIGIN));
    clock.advance(2_000);
    recorded.events.length = 0;
    expect(await inTx(tx, (w) => secrets.prune(w, GLOBAL_SCOPE, ORIGIN, "ci/"))).toBe(1);
    expect(recorded.events.map((e) => [e.type, e.key])).toEqual([["secret.expired", "ci/a"]]);
    expect(await rawRow(rec, GLOBAL_SCOPE, "ci/a")).toBeUndefined();
    expect((await rawRow(rec, GLOBAL_SCOPE, "prod/a"))?.state).toBe("active");
  });

  it("expireDue works in batches and reports how many it expired", async () => {
    const v = buildTestVault();
    for (let i = 0; i < 7; i++) {
      await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: `k${i}`, value: "v", ttlSeconds: 1 + i }, ORIGIN));
    }
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "forever", value: "v" }, ORIGIN));
    v.clock.advance(60_000);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 3, ORIGIN))).toBe(3);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 3, ORIGIN))).toBe(3);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 3, ORIGIN))).toBe(1);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 3, ORIGIN))).toBe(0);
    const states = await v.query("SELECT state, count(*) AS n FROM secrets GROUP BY state ORDER BY state");
    expect(states).toEqual([
      { state: "active", n: 1 },
      { state: "expired", n: 7 },
    ]);
    expect(await countOf(v, "SELECT count(*) AS n FROM secrets WHERE state = 'expired' AND ciphertext IS NOT NULL")).toBe(0);
  });

  it("the sweeper expires everything due, SWEEP_BATCH at a time, through the group commit", async () => {
    const v = buildTestVault();
    const n = SWEEP_BATCH * 2 + 10;
    await inTx(v.tx, async (w) => {
      for (let i = 0; i < n; i++) await v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "v", ttlSeconds: 1 }, ORIGIN);
    });
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "kept", value: "v", ttlSeconds: 100 }, ORIGIN));
    v.clock.advance(1_000);
    const sweeper = startSweeper({ secrets: v.secrets, tx: v.tx, log: createLogger("silent"), intervalMs: 0 });
    expect(await sweeper.sweepNow()).toBe(n);
    expect(await sweeper.sweepNow()).toBe(0);
    await sweeper.stop();
    expect(await countOf(v, "SELECT count(*) AS n FROM secrets WHERE state = 'expired' AND ciphertext IS NULL")).toBe(n);
    expect((await rawRow(v, GLOBAL_SCOPE, "kept"))?.state).toBe("active");
  });

  it("expires the oldest due first, and leaves secrets not yet due alone", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "late", value: "v", ttlSeconds: 30 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "early", value: "v", ttlSeconds: 10 }, ORIGIN));
    v.clock.advance(20_000);
    expect(await inTx(v.tx, (w) => v.secrets.expireDue(w, 10, ORIGIN))).toBe(1);
    expect((await rawRow(v, GLOBAL_SCOPE, "early"))?.state).toBe("expired");
    expect((await rawRow(v, GLOBAL_SCOPE, "late"))?.state).toBe("active");
  });

  it("HEAD-style peek does not count a read, and expires a due secret", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 1, ttlSeconds: 10 }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.peek(w, GLOBAL_SCOPE, "k", ORIGIN))).toMatchObject({ readCount: 0 });
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.read_count).toBe(0);
    v.clock.advance(10_000);
    expect(await inTx(v.tx, (w) => v.secrets.peek(w, GLOBAL_SCOPE, "k", ORIGIN))).toBeUndefined();
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toMatchObject({ state: "expired", ciphertext: null });
  });
});

describe("SecretLifecycle: PATCH", () => {
  it("sets a new TTL counted from now", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 10 }, ORIGIN));
    v.clock.advance(8_000);
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 100 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ expiresAt: v.clock.now() + 100_000, readCount: 0 });
    v.clock.advance(50_000);
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("sets a new read limit counted from now: read_count resets to 0", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 3 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { maxReads: 2 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ maxReads: 2, readCount: 0, expiresAt: null });
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("ok");
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({
      secret: { readCount: 2 },
    });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
  });

  it("with only a TTL keeps the read limit and count", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 3 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 5 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ maxReads: 3, readCount: 1 });
  });

  it("refuses a PATCH with neither field (invalid) and changes nothing", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 10 }, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", {}, ORIGIN, { sealable: false })), "invalid");
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.expires_at).toBe(v.clock.now() + 10_000);
  });

  it("answers not_found for a missing or expired secret", async () => {
    const v = buildTestVault();
    expect(await outcomeOf(v, (w) => v.secrets.update(w, GLOBAL_SCOPE, "nope", { ttlSeconds: 5 }, ORIGIN, { sealable: false }))).toBe("not_found");
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    expect(await outcomeOf(v, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 500 }, ORIGIN, { sealable: false }))).toBe("not_found");
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.state).toBe("expired");
  });

  it("makes a sealed secret active again with max_reads", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect((await rawRow(v, ORG, "k"))?.state).toBe("sealed");
    const out = await inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { maxReads: 2 }, ORIGIN, { sealable: true }));
    expect(out).toMatchObject({ state: "active", readCount: 0, maxReads: 2 });
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("keeps a sealed secret sealed when only the TTL changes", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { ttlSeconds: 60 }, ORIGIN, { sealable: true }));
    expect(out).toMatchObject({ state: "sealed", readCount: 1, expiresAt: v.clock.now() + 60_000 });
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toBe("gone");
  });

  it("refuses (conflict) to patch a sealable-route secret that burns on its limit, and changes nothing", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 5 }, ORIGIN));
    await expectVaultError(
      inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { maxReads: 1 }, ORIGIN, { sealable: true })),
      "conflict",
    );
    expect((await rawRow(v, ORG, "k"))?.max_reads).toBe(5);
  });
});

describe("SecretLifecycle: delete and key reuse", () => {
  it("deletes an active secret", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    expect(await outcomeOf(v, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN))).toBe("ok");
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
    expect(await outcomeOf(v, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN))).toBe("not_found");
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
  });

  it("deletes a sealed secret", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.remove(w, ORG, "k", ORIGIN))).toMatchObject({ state: "sealed" });
    expect(await rawRow(v, ORG, "k")).toBeUndefined();
  });

  it("refuses a duplicate of an active key (conflict), also of a sealed one", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "w" }, ORIGIN)), "conflict");
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "s", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "s", READER, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "s", value: "w" }, ORIGIN)), "conflict");
    // the first value is untouched
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("allows the key again after a burn", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one", maxReads: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({
      value: "two",
      secret: { readCount: 1 },
    });
  });

  it("allows the key again after expiry, swept or not, keeping the tombstone for prune", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    // not swept yet
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    await inTx(v.tx, (w) => v.secrets.expireDue(w, 10, ORIGIN));
    // swept
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "three" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "three" });
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(2);
  });

  it("allows the key again after a delete", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "two" });
  });
});

describe("SecretLifecycle: free-tier limit", () => {
  it("counts active and sealed secrets, not expired, burned or deleted ones", async () => {
    const { secrets, tx, clock } = recordingLifecycle({ activeLimit: 3 });
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "active", value: "v" }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: ORG, key: "sealed", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(tx, (w) => secrets.retrieve(w, ORG, "sealed", READER, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "third", value: "v", ttlSeconds: 1 }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(3);
    const err = await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    expect(err.error).toBe("free tier limit reached");
    expect(err.options.message).toMatch(/3 active secrets/);
    // an expired secret frees its slot, before and after the sweep
    clock.advance(1_000);
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "burns", value: "v", maxReads: 1 }, ORIGIN));
    await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    // a burned secret frees its slot
    await inTx(tx, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "burns", READER, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "deleted", value: "v" }, ORIGIN));
    await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    // a deleted secret frees its slot
    await inTx(tx, (w) => secrets.remove(w, GLOBAL_SCOPE, "deleted", ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(3);
  });

  it("has no limit when activeLimit is null", async () => {
    const { secrets, tx } = recordingLifecycle({ activeLimit: null });
    for (let i = 0; i < 150; i++) await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, value: `v${i}` }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(150);
  });
});

describe("SecretLifecycle: lists", () => {
  it("lists live secrets in creation order, page by page, without values", async () => {
    const v = buildTestVault();
    for (const key of ["a", "b", "c", "d", "e"]) {
      await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key, value: `value-of-${key}` }, ORIGIN));
    }
    const first = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2 }));
    expect(first.secrets.map((s) => s.key)).toEqual(["a", "b"]);
    expect(first.nextAfterId).not.toBeNull();
    const second = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2, afterId: first.nextAfterId ?? 0 }));
    expect(second.secrets.map((s) => s.key)).toEqual(["c", "d"]);
    const third = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2, afterId: second.nextAfterId ?? 0 }));
    expect(third.secrets.map((s) => s.key)).toEqual(["e"]);
    expect(third.nextAfterId).toBeNull();
    expect(JSON.stringify([first, second, third])).not.toContain("value-of-");
  });

  it("omits expired-unswept, burned and deleted secrets and other scopes", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "expires", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "burns", value: "v", maxReads: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "deleted", value: "v" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "live", value: "v", ttlSeconds: 100 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "org", value: "v" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "burns", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "deleted", ORIGIN));
    v.clock.advance(1_000);
    const page = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100 }));
    expect(page.secrets.map((s) => s.key)).toEqual(["live"]);
    // the unswept one is still a row, just not shown
    expect((await rawRow(v, GLOBAL_SCOPE, "expires"))?.state).toBe("active");
  });

  it("filters by key prefix, leaving out public secrets, with glob characters taken literally", async () => {
    const v = buildTestVault();
    for (const key of ["app/a", "app/b", "other", "app*x", "app[1]"]) {
      await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key, value: "v" }, ORIGIN));
    }
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "public" }, ORIGIN));
    const page = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app/" }));
    expect(page.secrets.map((s) => s.key)).toEqual(["app/a", "app/b"]);
    const star = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app*" }));
    expect(star.secrets.map((s) => s.key)).toEqual(["app*x"]);
    const bracket = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app[" }));
    expect(bracket.secrets.map((s) => s.key)).toEqual(["app[1]"]);
  });
});

describe("SecretLifecycle: events", () => {
  const types = (r: Recorded) => r.events.map((e) => e.type);

  it("emits secret.created, then secret.read, then secret.read + secret.burned on the last read", async () => {
    const { secrets, tx, recorded } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "the-value", maxReads: 2, ttlSeconds: 60 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.read", "secret.read", "secret.burned"]);
    expect(recorded.events[1]).toMatchObject({ scope: GLOBAL_SCOPE, key: "k", isPublic: false, readCount: 1, maxReads: 2 });
    expect(recorded.events[3]).toMatchObject({ readCount: 2, maxReads: 2 });
    expect(recorded.events[0]?.expiresAt).toBe(Date.UTC(2026, 0, 1) + 60_000);
  });

  it("emits secret.read then secret.sealed for a secret that seals", async () => {
    const { secrets, tx, recorded } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.read", "secret.sealed"]);
    expect(recorded.events[2]).toMatchObject({ scope: ORG, readCount: 1 });
  });

  it("emits secret.expired (and no secret.read) when a read finds the TTL passed", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 1 }, ORIGIN));
    clock.advance(1_000);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.expired"]);
  });

  it("emits secret.expired from the sweeper, secret.updated, secret.deleted, and the prune count", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "a", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, value: "public" }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "b", value: "v" }, ORIGIN));
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "b", { maxReads: 4 }, ORIGIN, { sealable: false }));
    await outcomeOf({ tx, secrets }, (w) => secrets.remove(w, GLOBAL_SCOPE, "b", ORIGIN));
    clock.advance(1_000);
    await inTx(tx, (w) => secrets.expireDue(w, 10, ORIGIN));
    await inTx(tx, (w) => secrets.prune(w, GLOBAL_SCOPE, ORIGIN));
    expect(types(recorded)).toEqual([
      "secret.created",
      "secret.created",
      "secret.created",
      "secret.updated",
      "secret.deleted",
      "secret.expired",
    ]);
    expect(recorded.events[1]?.isPublic).toBe(true);
    expect(recorded.events[3]).toMatchObject({ key: "b", maxReads: 4, readCount: 0 });
    expect(recorded.pruned).toEqual([{ scope: GLOBAL_SCOPE, count: 1 }]);
  });

  it("emits nothing for a refused change (duplicate, limit, invalid PATCH, not found)", async () => {
    const { secrets, tx, recorded } = recordingLifecycle({ activeLimit: 1 });
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    recorded.events.length = 0;
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN)).catch(() => undefined);
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "other", value: "v" }, ORIGIN)).catch(() => undefined);
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "k", {}, ORIGIN, { sealable: false })).catch(() => undefined);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "missing", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.remove(w, GLOBAL_SCOPE, "missing", ORIGIN));
    expect(recorded.events).toEqual([]);
  });

  it("never puts the value into an event", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    const value = "very-secret-value-7f3a";
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value, maxReads: 2 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 1 }, ORIGIN, { sealable: false }));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "b", value, maxReads: 1 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "b", READER, ORIGIN));
    clock.advance(1_000);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(recorded.events.length).toBeGreaterThanOrEqual(6);
    const text = JSON.stringify(recorded.events);
    expect(text).not.toContain(value);
    for (const event of recorded.events) expect(Object.keys(event).sort()).toEqual(
      ["expiresAt", "isPublic", "key", "maxReads", "readCount", "scope", "type"],
    );
  });

  it("rolls the change back when the event sink throws (fail closed)", async () => {
    const clock = fakeClock();
    let fail = false;
    const cipher = new ValueCipher(generateRootKey());
    const rec = buildTestWork(cipher);
    const secrets = new SecretLifecycle({
      cipher,
      events: {
        secretEvent: () => {
          if (fail) throw new Error("audit write failed");
        },
        secretsPruned: () => {},
      },
      now: clock.now,
      activeLimit: () => null,
    });
    const { tx } = rec;
    await tx.run((w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 1 }, ORIGIN));
    fail = true;
    await expect(tx.run((w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).rejects.toThrow("audit write failed");
    expect(await rawRow(rec, GLOBAL_SCOPE, "k")).toMatchObject({ state: "active", read_count: 0 });
  });
});

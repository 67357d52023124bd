import { describe, expect, it } from "vitest";
import { GLOBAL_SCOPE } from "../../../src/domain/secrets/model.js";
import { createLogger } from "../../../src/log/log.js";
import { SWEEP_BATCH, startSweeper } from "../../../src/runtime/sweeper.js";
import { buildTestVault } from "../../support/helpers.js";
import { ORIGIN, READER, ORG, inTx, recordingLifecycle, rawRow, countOf, outcomeOf } from "../../support/lifecycle-kit.js";

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

  it("expireDue fails as a whole when one row's event fails, after every row of the unit settled: nothing expired", async () => {
    const life = recordingLifecycle({ failEvent: (event) => event.type === "secret.expired" && event.key === "due/2" });
    for (let i = 1; i <= 3; i++) {
      await inTx(life.tx, (w) => life.secrets.create(w, { scope: GLOBAL_SCOPE, key: `due/${i}`, value: "v", ttlSeconds: 1 }, ORIGIN));
    }
    life.clock.advance(60_000);
    await expect(inTx(life.tx, (w) => life.secrets.expireDue(w, 10, ORIGIN))).rejects.toThrow("sink refused secret.expired due/2");
    // Each row's event was attempted before the unit failed, and its rollback undid all three.
    expect(life.recorded.events.filter((e) => e.type === "secret.expired").map((e) => e.key)).toEqual(["due/1", "due/2", "due/3"]);
    const states = await life.query("SELECT state, count(*) AS n FROM secrets GROUP BY state");
    expect(states).toEqual([{ state: "active", n: 3 }]);
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

  it("the sweeper's unit size is its deps' batch: 12 due in units of 5 are three units", async () => {
    const v = buildTestVault();
    await inTx(v.tx, async (w) => {
      for (let i = 0; i < 12; i++) await v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "v", ttlSeconds: 1 }, ORIGIN);
    });
    v.clock.advance(1_000);
    const units: number[] = [];
    const tx: typeof v.tx = {
      ...v.tx,
      run: (fn) => v.tx.run(async (w) => {
        const n = await fn(w);
        units.push(n as number);
        return n;
      }),
    };
    const sweeper = startSweeper({ secrets: v.secrets, tx, log: createLogger("silent"), intervalMs: 0, batch: 5 });
    expect(await sweeper.sweepNow()).toBe(12);
    await sweeper.stop();
    expect(units).toEqual([5, 5, 2]);
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

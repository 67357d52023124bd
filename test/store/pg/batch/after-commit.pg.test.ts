import { afterAll, beforeAll, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../../src/crypto/cipher.js";
import { SYSTEM_ORIGIN } from "../../../../src/domain/events.js";
import type { SecretEvent } from "../../../../src/domain/events.js";
import type { PgEngine } from "../../../../src/store/pg/index.js";
import type { Work } from "../../../../src/store/work.js";
import type { Vault } from "../../../../src/assembly/vault.js";
import { createTestDatabase, describePg, openTestNode } from "../../../support/pg-database.js";
import type { TestDatabase } from "../../../support/pg-database.js";

// Work.afterCommit (store/work.ts UnitOfWork.run): the PostgreSQL group commit runs a failed
// batch's units again, each alone (store/pg/batch/group-commit.ts), so a unit's function runs
// twice; what it does outside the transaction (the metrics sink, runtime/metrics.ts) runs once,
// after the attempt that committed. On the real cluster, no mocks.

const EVENT: SecretEvent = { type: "secret.read", scope: "global", key: "after-commit", isPublic: false, readCount: 1, maxReads: null, expiresAt: null };

/** vault_secret_events_total{type="secret.read"}. */
async function readsCounted(vault: Vault<PgEngine>): Promise<number> {
  const metric = (await vault.metrics.registry.getMetricsAsJSON()).find((m) => m.name === "vault_secret_events_total");
  const value = metric?.values.find((v) => v.labels.type === "secret.read");
  return Number(value?.value ?? 0);
}

describePg("after-commit callbacks under the PostgreSQL group commit", () => {
  let db: TestDatabase;
  let engine: PgEngine;
  let vault: Vault<PgEngine>;

  beforeAll(async () => {
    db = await createTestDatabase();
    ({ engine, vault } = await openTestNode(db.url, new ValueCipher(generateRootKey()), 4, {}, { groupCommit: true }));
  });

  afterAll(async () => {
    await engine?.close();
    await db?.drop();
  });

  it("counts a unit's metrics once when its batch fails and the unit runs again alone", async () => {
    const before = await readsCounted(vault);
    let runs = 0;
    const counted = (w: Work) => {
      runs++;
      return vault.metrics.sink.secretEvent(w, EVENT, SYSTEM_ORIGIN);
    };
    // Queued in one turn: one batch. The second unit changes a row and then fails, so the whole
    // batch rolls back and each unit runs again in a transaction of its own.
    const ok = engine.tx.run(async (w) => {
      await counted(w);
      return "ok";
    });
    const failing = engine.tx.run(async (w) => {
      await w.meta.set("after-commit-probe", String(Date.now()));
      await counted(w);
      throw new Error("fails after a change");
    });
    await expect(ok).resolves.toBe("ok");
    await expect(failing).rejects.toThrow("fails after a change");
    // Both ran in the batch and again alone: four runs, one of them committed with its event.
    expect(runs).toBe(4);
    expect(await readsCounted(vault)).toBe(before + 1);
  });

  it("counts nothing of a unit that rolls back on its own", async () => {
    const before = await readsCounted(vault);
    await expect(
      engine.tx.run(async (w) => {
        await vault.metrics.sink.secretEvent(w, EVENT, SYSTEM_ORIGIN);
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await readsCounted(vault)).toBe(before);
  });
});

import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";

// What an attacker with write access to the database (but not the root key)
// can and cannot roll back, as docs/operations.md ("Encryption at rest: what
// write access to the database can do") states it. Runs on both engines.

interface Snapshot {
  ciphertext: Buffer;
  created_at: number;
}

describe("rolling a secret back with write access to the database", () => {
  it("an old ciphertext alone, or moved to another key with its creation time, answers 500; the old row's ciphertext and creation time together are served (the documented limit)", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "old-value-1" })).status).toBe(201);
    const [old] = (await v.query("SELECT ciphertext, created_at FROM secrets WHERE key = 'db/password'")) as unknown as Snapshot[];
    expect((await v.asMaster("DELETE", "/secrets/db/password")).status).toBe(200);
    v.clock.advance(1000);
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "new-value-2" })).status).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { key: "other", value: "other-value" })).status).toBe(201);
    const snapshot = old as Snapshot;

    // Bound by the AAD: the ciphertext alone (a newer creation time in the row) does not open.
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'db/password'", snapshot.ciphertext);
    const alone = await v.asMaster("GET", "/secrets/db/password");
    expect(alone.status).toBe(500);
    expect(await alone.text()).not.toContain("old-value-1");

    // Bound by the AAD: moved to another key, even with its creation time, it does not open.
    await v.query("UPDATE secrets SET ciphertext = ?, created_at = ? WHERE key = 'other'", snapshot.ciphertext, snapshot.created_at);
    const moved = await v.asMaster("GET", "/secrets/other");
    expect(moved.status).toBe(500);
    expect(await moved.text()).not.toContain("old-value-1");

    // Not bound: every AAD input is a column of the row, so the old row's ciphertext and creation time,
    // put back together, are served. docs/operations.md says so; a backup restore is the legitimate form of this.
    await v.query("UPDATE secrets SET ciphertext = ?, created_at = ? WHERE key = 'db/password'", snapshot.ciphertext, snapshot.created_at);
    const rolledBack = await v.asMaster("GET", "/secrets/db/password");
    expect(rolledBack.status).toBe(200);
    expect(await rolledBack.json()).toMatchObject({ value: "old-value-1" });
  });

  it("after a replace the old ciphertext alone answers 500; with its value version put back too (the whole row rolled back) it is served (the documented limit)", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "old-value-1" })).status).toBe(201);
    const [old] = (await v.query("SELECT ciphertext, value_version FROM secrets WHERE key = 'db/password'")) as unknown as {
      ciphertext: Buffer;
      value_version: number;
    }[];
    expect((await v.asMaster("PUT", "/secrets/db/password", { value: "new-value-2" })).status).toBe(200);
    const snapshot = old as { ciphertext: Buffer; value_version: number };

    // Bound by the AAD: the replace moved the row's value version, so the old ciphertext alone does not open.
    await v.query("UPDATE secrets SET ciphertext = ? WHERE key = 'db/password'", snapshot.ciphertext);
    const alone = await v.asMaster("GET", "/secrets/db/password");
    expect(alone.status).toBe(500);
    expect(await alone.text()).not.toContain("old-value-1");

    // Not bound: the value version is a column of the row too; put back with the ciphertext it is a
    // rollback of the row, which the AAD cannot see (docs/operations.md; the audit log records the replace).
    await v.query("UPDATE secrets SET ciphertext = ?, value_version = ? WHERE key = 'db/password'", snapshot.ciphertext, snapshot.value_version);
    const rolledBack = await v.asMaster("GET", "/secrets/db/password");
    expect(rolledBack.status).toBe(200);
    expect(await rolledBack.json()).toMatchObject({ value: "old-value-1" });
  });

  it("read counts and limits are plain columns: a read count set back gives a burned-after-N secret more reads (the documented limit)", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "once", value: "v", max_reads: 2 })).status).toBe(201);
    expect((await v.asMaster("GET", "/secrets/once")).status).toBe(200);
    await v.query("UPDATE secrets SET read_count = 0 WHERE key = 'once'");
    expect(await (await v.asMaster("GET", "/secrets/once")).json()).toMatchObject({ read_count: 1, max_reads: 2 });
  });
});

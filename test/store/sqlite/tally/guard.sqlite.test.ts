import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import type { Db } from "../../../../src/store/sqlite/db.js";
import type { SecretRecord } from "../../../../src/store/secrets.js";
import { SqliteSecretStore } from "../../../../src/store/sqlite/secrets.js";

/**
 * The read-count UPDATE is the one guard against a read past max_reads
 * (docs/contract.md §6): it must hold on its own, even for a reader whose
 * SELECT saw the row before another connection counted the last read. Two
 * connections on one database file, as a second process (or the PostgreSQL
 * engine's pooled clients) would have. On SQLite it is a compare-and-set on
 * the count the reader saw (store/sqlite/secrets.ts countRead).
 */
/** The read's clock (Unix ms) and reader (null: the master key), the read rule's other inputs. */
const NOW = 1_000;
const MASTER = null;

describe("the read-count UPDATE", () => {
  const dirs: string[] = [];
  const open: Db[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function twoConnections(): [Db, Db] {
    const dir = mkdtempSync(join(tmpdir(), "ev-guard-"));
    dirs.push(dir);
    const file = join(dir, "vault.db");
    const a = openDatabase(file);
    const b = openDatabase(file);
    open.push(a, b);
    return [a, b];
  }

  /** Inserts an active secret that does not burn at its limit (an org secret with delete:false). */
  function insertSecret(db: Db, maxReads: number): number {
    return new SqliteSecretStore(db).insert({
      scope: "org_test",
      key: "k",
      isPublic: false,
      ciphertext: Buffer.from("not a real ciphertext"),
      now: 1_000,
      expiresAt: null,
      maxReads,
      burnOnLimit: false,
      ownerId: null,
      allowedKeys: null,
    }).id;
  }

  it("counts no read past max_reads for a reader that saw the row before the last read was counted", () => {
    const [a, b] = twoConnections();
    const id = insertSecret(a, 1);
    const sa = new SqliteSecretStore(a);
    const sb = new SqliteSecretStore(b);
    // Both readers see an active row with a read left.
    const seenByB = sb.live("org_test", "k");
    const seenByA = sa.live("org_test", "k");
    expect(seenByB).toMatchObject({ id, state: "active", readCount: 0, maxReads: 1 });
    expect(seenByA).toMatchObject({ id, state: "active", readCount: 0, maxReads: 1 });
    // A counts the last read and commits; the row stays active (the lifecycle
    // seals it in a later statement, which this reader has not run yet).
    a.exec("BEGIN IMMEDIATE");
    expect(sa.countRead(seenByA as SecretRecord, NOW, MASTER)).toEqual({ readCount: 1, maxReads: 1 });
    a.exec("COMMIT");
    // B, acting on what it saw, gets nothing: no second read is counted.
    b.exec("BEGIN IMMEDIATE");
    expect(sb.countRead(seenByB as SecretRecord, NOW, MASTER)).toBeUndefined();
    b.exec("COMMIT");
    expect(sb.live("org_test", "k")).toMatchObject({ readCount: 1, maxReads: 1 });
  });

  it("counts reads up to max_reads and no further, across connections", () => {
    const [a, b] = twoConnections();
    const id = insertSecret(a, 3);
    const counted = [a, b, a, b, a].map((db) => {
      const store = new SqliteSecretStore(db);
      const row = store.live("org_test", "k") as SecretRecord;
      expect(row.id).toBe(id);
      return store.countRead(row, NOW, MASTER)?.readCount;
    });
    expect(counted).toEqual([1, 2, 3, undefined, undefined]);
  });

  it("refuses a reader whose count is out of date even with reads left: a compare-and-set, never a second count on an old view", () => {
    const [a, b] = twoConnections();
    insertSecret(a, 3);
    const sa = new SqliteSecretStore(a);
    const sb = new SqliteSecretStore(b);
    const stale = sb.live("org_test", "k") as SecretRecord;
    expect(sa.countRead(sa.live("org_test", "k") as SecretRecord, NOW, MASTER)).toEqual({ readCount: 1, maxReads: 3 });
    expect(sb.countRead(stale, NOW, MASTER)).toBeUndefined();
    expect(sb.live("org_test", "k")).toMatchObject({ readCount: 1, maxReads: 3 });
    // Read afresh, the count goes on.
    expect(sb.countRead(sb.live("org_test", "k") as SecretRecord, NOW, MASTER)).toEqual({ readCount: 2, maxReads: 3 });
  });
});

import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { migrateFromSqlite } from "../../../../src/ops/migrate-to-pg.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import type { Db } from "../../../../src/store/sqlite/db.js";
import { FLUSH_CHUNK, FLUSH_INTERVAL_MS, GROUP_BITS, READS_FLUSHED_META, ReadTally, readsToReplay, replayReads } from "../../../../src/store/sqlite/tally/index.js";
import type { TallyBatch } from "../../../../src/store/sqlite/tally/index.js";
import { SqliteSecretStore } from "../../../../src/store/sqlite/secrets.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";
import type { SqliteTestVault } from "../../../support/helpers.js";

// Read counts are written behind (src/store/sqlite/tally/read-tally.ts): a counted read inside a batch
// writes no page of `secrets`; the audit log is the count's redo log, and a vault opened after a
// crash replays it (tally/read-replay.ts). These tests take crash images (the database and its WAL as
// the last COMMIT left them, the vault still open: what kill -9 leaves) and check that no
// acknowledged read is lost, none is counted twice, and a read limit stays exact.

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fileVault(): { v: SqliteTestVault; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "ev-tally-"));
  dirs.push(dir);
  return { v: buildSqliteTestVault({ db: openDatabase(join(dir, "vault.db")) }), dir };
}

/** The database files as they are now, copied aside and opened: the vault's state after a kill -9 at this moment. */
function crashImage(dir: string): Db {
  const to = mkdtempSync(join(tmpdir(), "ev-tally-crash-"));
  dirs.push(to);
  copyFileSync(join(dir, "vault.db"), join(to, "vault.db"));
  if (existsSync(join(dir, "vault.db-wal"))) copyFileSync(join(dir, "vault.db-wal"), join(to, "vault.db-wal"));
  return openDatabase(join(to, "vault.db"));
}

/** The stored pairs (no write-back first): key -> read_count, its `secret_reads` row's if it has one, else its row's. */
function storedCounts(db: Db): Map<string, number> {
  const rows = db
    .prepare(
      `SELECT s.key, coalesce(r.read_count, s.read_count) AS read_count
         FROM secrets s LEFT JOIN secret_reads r ON r.id = s.id WHERE s.state IN ('active', 'sealed')`,
    )
    .all() as { key: string; read_count: number }[];
  return new Map(rows.map((r) => [r.key, r.read_count]));
}

/** The secrets' own rows, `secret_reads` left out: key -> read_count. */
function rowCounts(db: Db): Map<string, number> {
  const rows = db.prepare("SELECT key, read_count FROM secrets WHERE state IN ('active', 'sealed')").all() as { key: string; read_count: number }[];
  return new Map(rows.map((r) => [r.key, r.read_count]));
}

/** The vault's own answer: key -> read_count, from the list (no read counted). */
async function listedCounts(v: SqliteTestVault): Promise<Map<string, number>> {
  const res = await v.asMaster("GET", "/secrets?limit=1000");
  const body = (await res.json()) as { secrets: { key: string; read_count: number }[] };
  return new Map(body.secrets.map((s) => [s.key, s.read_count]));
}

describe("the read tally", () => {
  it("a counted read writes no page of secrets inside a batch; the API answers the tally's count", async () => {
    const { v } = fileVault();
    expect((await v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 5 })).status).toBe(201);
    for (let i = 1; i <= 3; i++) expect(await (await v.asMaster("GET", "/secrets/k")).json()).toMatchObject({ read_count: i });
    // The row still holds the create's count; the tally holds three reads.
    expect(storedCounts(v.db).get("k")).toBe(0);
    expect(v.sqlite.work.tally.size).toBe(1);
    expect(await listedCounts(v)).toEqual(new Map([["k", 3]]));
    expect(await (await v.asMaster("GET", "/secrets?limit=1")).json()).toMatchObject({ secrets: [{ key: "k", read_count: 3 }] });
    // A stop writes it back.
    await v.engine.close();
    const reopened = openDatabase(v.db.name);
    expect(storedCounts(reopened).get("k")).toBe(3);
    expect(readsToReplay(reopened)).toBe(false);
    reopened.close();
  });

  it("writes a row back once it has waited FLUSH_INTERVAL_MS, with the mark", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { v } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    await v.asMaster("GET", "/secrets/a");
    expect(storedCounts(v.db).get("a")).toBe(0);
    vi.setSystemTime(Date.now() + FLUSH_INTERVAL_MS + 1);
    // The next batch (any request that commits) writes the oldest pending rows back.
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" });
    expect(storedCounts(v.db).get("a")).toBe(1);
    expect(v.sqlite.work.tally.size).toBe(0);
    const mark = v.db.prepare("SELECT value FROM meta WHERE name = ?").get(READS_FLUSHED_META) as { value: string };
    const last = v.db.prepare("SELECT max(id) AS id FROM audit").get() as { id: number };
    expect(Number(mark.value)).toBe(last.id);
  });

  it("a write-back writes the pairs into secret_reads, not the secrets' rows; a change of the row folds them back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { v, dir } = fileVault();
    for (const key of ["p", "d", "r"]) await v.asMaster("POST", "/secrets", { key, value: "v", max_reads: 9 });
    for (const key of ["p", "p", "d", "r"]) await v.asMaster("GET", `/secrets/${key}`);
    vi.setSystemTime(Date.now() + FLUSH_INTERVAL_MS + 1);
    await v.asMaster("POST", "/secrets", { key: "later", value: "v" });
    expect(v.sqlite.work.tally.size).toBe(0);
    expect(storedCounts(v.db)).toEqual(new Map([["p", 2], ["d", 1], ["r", 1], ["later", 0]]));
    expect(rowCounts(v.db)).toEqual(new Map([["p", 0], ["d", 0], ["r", 0], ["later", 0]]));
    const side = () => (v.db.prepare("SELECT s.key FROM secret_reads r JOIN secrets s ON s.id = r.id ORDER BY s.key").all() as { key: string }[]).map((r) => r.key);
    expect(side()).toEqual(["d", "p", "r"]);
    // The vault answers the written-back counts, in a read and in the list.
    expect(await (await v.asMaster("GET", "/secrets/p")).json()).toMatchObject({ read_count: 3 });
    expect(await listedCounts(v)).toEqual(new Map([["p", 3], ["d", 1], ["r", 1], ["later", 0]]));
    expect(storedCounts(crashImage(dir))).toEqual(new Map([["p", 3], ["d", 1], ["r", 1], ["later", 0]]));
    // A patch folds p's pair into its row first (then resets it), a delete removes d's, a replace r's.
    expect((await v.asMaster("PATCH", "/secrets/p", { max_reads: 4 })).status).toBe(200);
    expect((await v.asMaster("DELETE", "/secrets/d")).status).toBe(200);
    expect((await v.asMaster("PUT", "/secrets/r", { value: "w" })).status).toBe(200);
    expect(side()).toEqual([]);
    expect(v.db.prepare("SELECT count(*) AS n FROM secret_reads").get()).toEqual({ n: 0 });
    expect(rowCounts(v.db)).toEqual(new Map([["p", 0], ["r", 0], ["later", 0]]));
    expect(await (await v.asMaster("GET", "/secrets/p")).json()).toMatchObject({ read_count: 1, max_reads: 4 });
  });

  it("a write-back takes every pending secret of the oldest secrets' id ranges, one leaf of secret_reads each", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { v } = fileVault();
    const n = (1 << GROUP_BITS) + 40;
    for (let i = 0; i < n; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, j) => v.asMaster("POST", "/secrets", { key: `k${i + j}`, value: "v" })));
    }
    const ids = v.db.prepare("SELECT id FROM secrets ORDER BY id").all() as { id: number }[];
    expect(ids.at(-1)?.id).toBe(n);
    // Read every secret, the newest range first: its secrets are the oldest pending.
    const byId = [...ids].sort((a, b) => (b.id >> GROUP_BITS) - (a.id >> GROUP_BITS) || a.id - b.id);
    for (const { id } of byId) {
      const key = (v.db.prepare("SELECT key FROM secrets WHERE id = ?").get(id) as { key: string }).key;
      expect((await v.asMaster("GET", `/secrets/${key}`)).status).toBe(200);
    }
    expect(v.sqlite.work.tally.size).toBe(n);
    vi.setSystemTime(Date.now() + FLUSH_INTERVAL_MS + 1);
    await v.asMaster("POST", "/secrets", { key: "later", value: "v" });
    // The oldest FLUSH_CHUNK lie in the last range (ids 256 and above, 41 of them) and the first:
    // both ranges whole, every one of the n, although the chunk is smaller.
    expect(FLUSH_CHUNK).toBeLessThan(n);
    expect(v.sqlite.work.tally.size).toBe(0);
    expect(v.db.prepare("SELECT count(*) AS n FROM secret_reads").get()).toEqual({ n });
  });

  it("outside a batch, a compare-and-set read and a row change fold the secret_reads row first", async () => {
    const db = openDatabase(":memory:");
    const store = new SqliteSecretStore(db);
    const base = { isPublic: false, ciphertext: Buffer.from("c"), now: 1, expiresAt: null, burnOnLimit: true, ownerId: null, allowedKeys: null };
    const a = store.insert({ ...base, scope: "global", key: "a", maxReads: 4 });
    const b = store.insert({ ...base, scope: "global", key: "b", maxReads: null });
    db.prepare("INSERT INTO secret_reads (id, read_count, audit_head) VALUES (?, 2, NULL), (?, 5, NULL)").run(a.id, b.id);
    const read = store.live("global", "a");
    expect(read?.readCount).toBe(2);
    expect(store.countRead(read as NonNullable<typeof read>, 2, null)).toEqual({ readCount: 3, maxReads: 4 });
    expect(rowCounts(db).get("a")).toBe(3);
    // A stale count (the row's own 0, not the stored 2) is refused.
    expect(store.countRead({ ...a, readCount: 0 }, 2, null)).toBeUndefined();
    expect(store.list({ scope: "global", now: 2, afterId: 0, limit: 10, includeSealed: false, keyPrefix: undefined }).map((s) => s.readCount)).toEqual([3, 5]);
    store.seal(b.id, 2);
    expect(rowCounts(db)).toEqual(new Map([["a", 3], ["b", 5]]));
    expect(db.prepare("SELECT count(*) AS n FROM secret_reads").get()).toEqual({ n: 0 });
    db.close();
  });

  it("entries a rolled-back batch puts back stay in age order; a rolled-back savepoint restores an entry in place", () => {
    const db = openDatabase(":memory:");
    let t = 0;
    const tally = new ReadTally(db, () => t);
    const store = new SqliteSecretStore(db, tally);
    const base = { scope: "global", isPublic: false, ciphertext: Buffer.from("c"), now: 1, expiresAt: null, maxReads: null, burnOnLimit: true, ownerId: null, allowedKeys: null };
    const a = store.insert({ ...base, key: "a" });
    // b in another id range than a: a write-back of a's range leaves b pending.
    db.prepare("INSERT INTO secrets (id, scope, key, state, ciphertext, created_at, updated_at) VALUES (?, 'global', 'b', 'active', x'00', 1, 1)").run(1 << (GROUP_BITS + 1));
    const b = 1 << (GROUP_BITS + 1);
    const hooks = { savepoint: [] as (() => void)[], before: [] as (() => void)[], rollback: [] as ((whole: boolean) => void)[], committed: [] as (() => void)[] };
    const batch: TallyBatch = {
      inBatch: true,
      onSavepoint: (h) => hooks.savepoint.push(h),
      onBeforeCommit: (h) => hooks.before.push(h),
      onRollback: (h) => hooks.rollback.push(h),
      onCommitted: (h) => hooks.committed.push(() => h(1, 0)),
    };
    tally.attach(batch);
    const row = () => Number(db.prepare("INSERT INTO audit (scope, at, action, key, hash) VALUES ('global', 0, 'secret.read', 'x', 'h')").run().lastInsertRowid);
    const commitBatch = (unit: () => void) => {
      db.exec("BEGIN");
      for (const h of hooks.savepoint) h();
      unit();
      for (const h of hooks.before) h();
      db.exec("COMMIT");
      for (const h of hooks.committed) h();
    };
    const mark = () => Number((db.prepare("SELECT value FROM meta WHERE name = ?").get(READS_FLUSHED_META) as { value: string }).value);
    // A read of a at 0 ms, of b at 1,000 ms: a is the oldest.
    const readA = row();
    commitBatch(() => {
      tally.setReadCount(a.id, 1);
      tally.setHead(a.id, readA);
    });
    t = 1000;
    const readB = row();
    commitBatch(() => {
      tally.setReadCount(b, 1);
      tally.setHead(b, readB);
    });
    // A unit counts a second read of b and rolls back: b's entry is as it was, in place.
    t = 2000;
    commitBatch(() => {
      for (const h of hooks.savepoint) h();
      db.exec("SAVEPOINT unit");
      tally.setReadCount(b, 2);
      db.exec("ROLLBACK TO unit");
      db.exec("RELEASE unit");
      for (const h of hooks.rollback) h(false);
    });
    expect(tally.readCount(b, 0)).toBe(1);
    expect(tally.size).toBe(2);
    // Nothing is due before a has waited FLUSH_INTERVAL_MS; the mark stays below a's read.
    t = FLUSH_INTERVAL_MS - 1;
    commitBatch(() => {});
    expect(tally.size).toBe(2);
    expect(mark()).toBeLessThan(readA);
    // Then a write-back is due, by a's age (b has waited 4 s): both ranges go, within FLUSH_CHUNK.
    // The batch's COMMIT fails (a full disk): the whole batch rolls back, both entries come back,
    // b's before a's (undone newest first).
    t = FLUSH_INTERVAL_MS;
    db.exec("BEGIN");
    for (const h of hooks.savepoint) h();
    for (const h of hooks.before) h();
    expect(tally.size).toBe(0);
    db.exec("ROLLBACK");
    for (const h of hooks.rollback) h(true);
    expect(tally.size).toBe(2);
    expect(db.prepare("SELECT count(*) AS n FROM secret_reads").get()).toEqual({ n: 0 });
    // a is still the oldest: the next batch writes both back.
    commitBatch(() => {});
    expect(db.prepare("SELECT id, read_count, audit_head FROM secret_reads ORDER BY id").all()).toEqual([
      { id: a.id, read_count: 1, audit_head: readA },
      { id: b, read_count: 1, audit_head: readB },
    ]);
    expect(tally.size).toBe(0);
    expect(mark()).toBe(readB);
    db.close();
  });

  it("a unit that fails after others created secrets in its batch leaves their heads written: a crash does not give a new secret its predecessor's reads", async () => {
    const { v, dir } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" });
    await Promise.all([v.asMaster("GET", "/secrets/b"), v.asMaster("DELETE", "/secrets/b")]);
    // One batch: b created again and a created, then a unit refused (409) before any read was counted.
    const answers = await Promise.all([
      v.asMaster("POST", "/secrets", { key: "b", value: "again" }),
      v.asMaster("POST", "/secrets", { key: "a", value: "v" }),
      v.asMaster("POST", "/secrets", { key: "a", value: "v" }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([201, 201, 409]);
    expect(v.db.prepare("SELECT count(*) AS n FROM secrets WHERE audit_head IS NULL").get()).toEqual({ n: 0 });
    expect(storedCounts(crashImage(dir))).toEqual(new Map([["a", 0], ["b", 0]]));
    expect(await listedCounts(v)).toEqual(new Map([["a", 0], ["b", 0]]));
  });

  it("a crash image replays every acknowledged read once: the read limit stays exact", async () => {
    const { v, dir } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "limited", value: "v", max_reads: 3 });
    await v.asMaster("POST", "/secrets", { key: "other", value: "v" });
    expect((await v.asMaster("GET", "/secrets/limited")).status).toBe(200);
    expect((await v.asMaster("GET", "/secrets/limited")).status).toBe(200);
    await Promise.all([v.asMaster("GET", "/secrets/other"), v.asMaster("GET", "/secrets/other")]);
    expect(storedCounts(v.db).get("limited")).toBe(0);

    const db = crashImage(dir);
    expect(storedCounts(db)).toEqual(new Map([["limited", 2], ["other", 2]]));
    expect(readsToReplay(db)).toBe(false);
    // Replaying again counts nothing more.
    expect(replayReads(db)).toBe(0);
    const after = buildSqliteTestVault({ db, cipher: v.cipher });
    expect(await (await after.asMaster("GET", "/secrets/limited")).json()).toMatchObject({ read_count: 3, max_reads: 3 });
    expect((await after.asMaster("GET", "/secrets/limited")).status).toBe(404);
  });

  it("a replace, a patch, a burn and a key created again after it are replayed as the vault answered", async () => {
    const { v, dir } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "r", value: "v" });
    await v.asMaster("POST", "/secrets", { key: "p", value: "v", max_reads: 10 });
    await v.asMaster("POST", "/secrets", { key: "b", value: "v", max_reads: 2 });
    // In one batch each: reads, then the change, then reads again.
    await Promise.all([v.asMaster("GET", "/secrets/r"), v.asMaster("PUT", "/secrets/r", { value: "w" }), v.asMaster("GET", "/secrets/r")]);
    await Promise.all([v.asMaster("GET", "/secrets/p"), v.asMaster("PATCH", "/secrets/p", { max_reads: 4 }), v.asMaster("GET", "/secrets/p")]);
    await Promise.all([v.asMaster("GET", "/secrets/b"), v.asMaster("GET", "/secrets/b")]);
    await Promise.all([v.asMaster("POST", "/secrets", { key: "b", value: "again" }), v.asMaster("GET", "/secrets/b")]);
    // Whatever order the units ran in, the crash image holds what the vault answers.
    const answered = await listedCounts(v);
    expect([...answered.keys()].sort()).toEqual(["b", "p", "r"]);
    expect(storedCounts(crashImage(dir))).toEqual(answered);
  });

  it("a read whose unit rolls back is not counted, in the tally or after a crash", async () => {
    const { v, dir } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "good", value: "v" });
    await v.asMaster("POST", "/secrets", { key: "bad", value: "v" });
    // A ciphertext that no longer opens: the read's unit fails after counting, and rolls back.
    v.db.prepare("UPDATE secrets SET ciphertext = zeroblob(64) WHERE key = 'bad'").run();
    const [good, bad] = await Promise.all([v.asMaster("GET", "/secrets/good"), v.asMaster("GET", "/secrets/bad")]);
    expect(good.status).toBe(200);
    expect(bad.status).toBe(500);
    expect(await listedCounts(v)).toEqual(new Map([["good", 1], ["bad", 0]]));
    expect(storedCounts(crashImage(dir))).toEqual(new Map([["good", 1], ["bad", 0]]));
  });

  it("random reads, replaces, patches, deletes and creates in batches: every crash image holds the counts the vault answered", async () => {
    const KEYS = ["a", "b", "c", "d/e", "f"];
    const op = fc.record({
      kind: fc.constantFrom("read", "read", "read", "read", "create", "replace", "patch", "delete"),
      key: fc.constantFrom(...KEYS),
      maxReads: fc.constantFrom(undefined, 2, 5),
    });
    // A batch that comes FLUSH_INTERVAL_MS late writes back the pending pairs into secret_reads first.
    const batchOf = fc.record({ ops: fc.array(op, { minLength: 1, maxLength: 12 }), late: fc.boolean() });
    vi.useFakeTimers({ toFake: ["Date"] });
    await fc.assert(
      fc.asyncProperty(fc.array(batchOf, { minLength: 1, maxLength: 6 }), async (batches) => {
        const { v, dir } = fileVault();
        for (const { ops: batch, late } of batches) {
          if (late) vi.setSystemTime(Date.now() + FLUSH_INTERVAL_MS + 1);
          await Promise.all(
            batch.map((o) => {
              const path = `/secrets/${o.key}`;
              if (o.kind === "read") return v.asMaster("GET", path);
              if (o.kind === "create") return v.asMaster("POST", "/secrets", { key: o.key, value: "v", max_reads: o.maxReads });
              if (o.kind === "replace") return v.asMaster("PUT", path, { value: "w", max_reads: o.maxReads });
              if (o.kind === "patch") return v.asMaster("PATCH", path, { max_reads: o.maxReads ?? 7 });
              return v.asMaster("DELETE", path);
            }),
          );
          const answered = await listedCounts(v);
          const image = crashImage(dir);
          expect(storedCounts(image)).toEqual(answered);
          image.close();
        }
        await v.engine.close();
      }),
      { numRuns: 30 },
    );
    // File databases, an fsync per COMMIT and a copy per batch: slow on a busy disk.
  }, 120_000);

  it("migrate --from-sqlite refuses a file a crash left with reads to replay, and takes it after a vault opened it", async () => {
    const { v, dir } = fileVault();
    await v.asMaster("POST", "/secrets", { key: "k", value: "v", max_reads: 4 });
    await v.asMaster("GET", "/secrets/k");
    const image = crashImage(dir);
    // openDatabase replayed the image already; a raw copy of the files has not been.
    image.close();
    const raw = mkdtempSync(join(tmpdir(), "ev-tally-raw-"));
    dirs.push(raw);
    copyFileSync(join(dir, "vault.db"), join(raw, "vault.db"));
    copyFileSync(join(dir, "vault.db-wal"), join(raw, "vault.db-wal"));
    // Refused before any connection: the URL is never dialled.
    await expect(migrateFromSqlite({ dataDir: raw, url: "postgres://nobody@127.0.0.1:1/none" })).rejects.toThrow(
      /holds reads its secrets' rows do not count yet .* start this ephemeral-vault on it once/,
    );
    const opened = openDatabase(join(raw, "vault.db"));
    expect(storedCounts(opened).get("k")).toBe(1);
    expect(readsToReplay(opened)).toBe(false);
    opened.close();
    await expect(migrateFromSqlite({ dataDir: raw, url: "postgres://nobody@127.0.0.1:1/none" })).rejects.toThrow(/--to postgres:/);
  });
});

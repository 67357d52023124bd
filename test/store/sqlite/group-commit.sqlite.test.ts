import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import type { Db } from "../../../src/store/sqlite/db.js";
import { ClosedError, GroupCommit } from "../../../src/store/sqlite/group-commit.js";

/** A :memory: database with a scratch table `t(n)` and a deferred foreign key `child -> parent`. */
function scratchDb(file = ":memory:"): Db {
  const db = openDatabase(file);
  db.exec(`
    CREATE TABLE t (n INTEGER NOT NULL);
    CREATE TABLE parent (id INTEGER PRIMARY KEY);
    CREATE TABLE child (parent_id INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
  `);
  return db;
}

const rows = (db: Db) => (db.prepare("SELECT n FROM t ORDER BY n").all() as { n: number }[]).map((r) => r.n);

/**
 * Wraps a database so the statements GroupCommit prepares are counted:
 * how many BEGINs and COMMITs really ran.
 */
function countingDb(db: Db): { db: Db; counts: { begin: number; commit: number } } {
  const counts = { begin: 0, commit: 0 };
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === "prepare") {
        return (sql: string) => {
          const statement = target.prepare(sql);
          const key = sql === "BEGIN IMMEDIATE" ? "begin" : sql === "COMMIT" ? "commit" : undefined;
          if (key === undefined) return statement;
          return {
            run: () => {
              counts[key]++;
              return statement.run();
            },
          };
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: proxy, counts };
}

const settle = <T>(p: Promise<T>) =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("GroupCommit", () => {
  it("queues the function and runs it in the turn's batch, inside a transaction", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    let inside: boolean | undefined;
    const p = tx.run(() => {
      inside = db.inTransaction;
      db.prepare("INSERT INTO t VALUES (1)").run();
      return "result";
    });
    // Queued: the batch runs after the poll phase (setImmediate), not inside run().
    expect(inside).toBeUndefined();
    expect(db.inTransaction).toBe(false);
    await expect(p).resolves.toBe("result");
    expect(inside).toBe(true);
    expect(rows(db)).toEqual([1]);
    expect(db.inTransaction).toBe(false); // committed before the promise settled
  });

  it("runs every unit queued behind an async one, synchronous ones included", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const a = tx.run(async () => {
      db.prepare("INSERT INTO t VALUES (1)").run();
      await Promise.resolve();
      return "async";
    });
    const b = tx.run(() => {
      db.prepare("INSERT INTO t VALUES (2)").run();
      return "sync 1";
    });
    const c = tx.run(() => {
      db.prepare("INSERT INTO t VALUES (3)").run();
      return "sync 2";
    });
    // Each settles (none is left waiting in the queue), in one batch.
    expect(await Promise.all([a, b, c])).toEqual(["async", "sync 1", "sync 2"]);
    expect(rows(db)).toEqual([1, 2, 3]);
    expect(counts).toEqual({ begin: 1, commit: 1 });
  });

  it("shares one transaction among all run() calls of one event-loop turn", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const ps = [1, 2, 3, 4, 5].map((n) => tx.run(() => db.prepare("INSERT INTO t VALUES (?)").run(n)));
    expect(counts).toEqual({ begin: 0, commit: 0 }); // queued until the batch runs
    tx.flush(); // what the turn's setImmediate does: run the queued units, commit
    expect(counts).toEqual({ begin: 1, commit: 1 });
    await Promise.all(ps);
    expect(counts).toEqual({ begin: 1, commit: 1 });
    expect(rows(db)).toEqual([1, 2, 3, 4, 5]);
    // the next turn is a new batch
    await tx.run(() => db.prepare("INSERT INTO t VALUES (6)").run());
    expect(counts).toEqual({ begin: 2, commit: 2 });
  });

  it("shares the transaction with runs started from microtasks of the same turn", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const ps: Promise<unknown>[] = [];
    ps.push(tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run()));
    await Promise.resolve();
    ps.push(tx.run(() => db.prepare("INSERT INTO t VALUES (2)").run()));
    await Promise.all(ps);
    expect(counts).toEqual({ begin: 1, commit: 1 });
  });

  it("settles each promise only after the COMMIT, with the function's result", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-gc-"));
    temps.push(dir);
    const file = join(dir, "gc.db");
    const db = scratchDb(file);
    const other = new Database(file, { readonly: true });
    const tx = new GroupCommit(db);
    const seen: { inTransaction: boolean; visibleElsewhere: number[] }[] = [];
    const ps = [1, 2, 3].map((n) =>
      tx
        .run(() => {
          db.prepare("INSERT INTO t VALUES (?)").run(n);
          return n * 10;
        })
        .then((result) => {
          seen.push({
            inTransaction: db.inTransaction,
            visibleElsewhere: (other.prepare("SELECT n FROM t ORDER BY n").all() as { n: number }[]).map((r) => r.n),
          });
          return result;
        }),
    );
    // not yet committed: another connection sees nothing
    expect(other.prepare("SELECT count(*) AS c FROM t").get()).toEqual({ c: 0 });
    expect(await Promise.all(ps)).toEqual([10, 20, 30]);
    expect(seen).toEqual([
      { inTransaction: false, visibleElsewhere: [1, 2, 3] },
      { inTransaction: false, visibleElsewhere: [1, 2, 3] },
      { inTransaction: false, visibleElsewhere: [1, 2, 3] },
    ]);
    other.close();
    db.close();
  });

  it("rolls back only the throwing function's changes; the rest of the batch commits", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const boom = new Error("boom");
    const a = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run()));
    const b = settle(
      tx.run(() => {
        db.prepare("INSERT INTO t VALUES (2)").run();
        db.prepare("INSERT INTO t VALUES (22)").run();
        throw boom;
      }),
    );
    const c = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (3)").run()));
    const results = await Promise.all([a, b, c]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(results[1]).toEqual({ ok: false, error: boom });
    expect(rows(db)).toEqual([1, 3]);
    expect(db.inTransaction).toBe(false);
  });

  it("rolls back a function that fails on a constraint, keeping the others", async () => {
    const db = scratchDb();
    db.exec("CREATE TABLE u (k TEXT PRIMARY KEY)");
    const tx = new GroupCommit(db);
    const a = settle(tx.run(() => db.prepare("INSERT INTO u VALUES ('x')").run()));
    const b = settle(
      tx.run(() => {
        db.prepare("INSERT INTO t VALUES (9)").run();
        db.prepare("INSERT INTO u VALUES ('x')").run();
      }),
    );
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.ok).toBe(true);
    expect(rb.ok).toBe(false);
    expect(String((rb as { error: unknown }).error)).toMatch(/UNIQUE/);
    expect(rows(db)).toEqual([]);
    expect(db.prepare("SELECT k FROM u").all()).toEqual([{ k: "x" }]);
  });

  it("rejects every waiter of the batch when the COMMIT fails (deferred foreign key), committing none of it", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const a = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run()));
    // a deferred foreign key is checked only at COMMIT: this statement succeeds, the COMMIT fails
    const b = settle(tx.run(() => db.prepare("INSERT INTO child VALUES (404)").run()));
    const c = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (3)").run()));
    const results = await Promise.all([a, b, c]);
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(String((r as { error: unknown }).error)).toMatch(/FOREIGN KEY/);
    }
    expect(db.inTransaction).toBe(false);
    expect(rows(db)).toEqual([]);
    expect(db.prepare("SELECT count(*) AS c FROM child").get()).toEqual({ c: 0 });
    // the connection is usable for the next batch
    await tx.run(() => db.prepare("INSERT INTO t VALUES (4)").run());
    expect(rows(db)).toEqual([4]);
  });

  it("rejects the whole batch when SQLite rolled the transaction back under a function", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const a = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run()));
    const fatal = new Error("disk I/O error (simulated)");
    const b = settle(
      tx.run(() => {
        db.exec("ROLLBACK"); // what SQLite does on SQLITE_FULL / SQLITE_IOERR
        throw fatal;
      }),
    );
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra).toEqual({ ok: false, error: fatal });
    expect(rb).toEqual({ ok: false, error: fatal });
    expect(rows(db)).toEqual([]);
    // later work gets a fresh batch
    const later = settle(tx.run(() => db.prepare("INSERT INTO t VALUES (2)").run()));
    expect((await later).ok).toBe(true);
    expect(rows(db)).toEqual([2]);
    expect(db.inTransaction).toBe(false);
  });

  it("close() commits what is pending; run() afterwards rejects with ClosedError", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const p = tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run());
    tx.close();
    expect(db.inTransaction).toBe(false);
    expect(rows(db)).toEqual([1]);
    await expect(p).resolves.toBeDefined();
    let ran = false;
    await expect(
      tx.run(() => {
        ran = true;
      }),
    ).rejects.toBeInstanceOf(ClosedError);
    expect(ran).toBe(false);
    // close twice is harmless, and the database can be closed after it
    tx.close();
    db.close();
  });

  it("flush() commits at once and a later flush() with nothing open does nothing", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const p = tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run());
    tx.flush();
    expect(counts.commit).toBe(1);
    tx.flush();
    await p;
    await new Promise((r) => setImmediate(r));
    expect(counts).toEqual({ begin: 1, commit: 1 });
  });

  it("keeps a read-modify-write atomic among the runs of one batch", async () => {
    const db = scratchDb();
    db.exec("CREATE TABLE counter (v INTEGER NOT NULL); INSERT INTO counter VALUES (0)");
    const tx = new GroupCommit(db);
    const get = db.prepare("SELECT v FROM counter");
    const set = db.prepare("UPDATE counter SET v = ?");
    await Promise.all(
      Array.from({ length: 100 }, () =>
        tx.run(() => {
          const { v } = get.get() as { v: number };
          set.run(v + 1);
        }),
      ),
    );
    expect(get.get()).toEqual({ v: 100 });
  });
});

describe("GroupCommit: units run alone (large writes)", () => {
  it("commits an alone unit in a batch of its own, after the small units queued with it have committed and settled", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const order: string[] = [];
    const big = tx.run(() => db.prepare("INSERT INTO t VALUES (100)").run(), { alone: true }).then(() => order.push("big settled"));
    const smalls = [1, 2, 3].map((n) => tx.run(() => db.prepare("INSERT INTO t VALUES (?)").run(n)).then(() => order.push(`small ${n} settled`)));
    await Promise.all([big, ...smalls]);
    // The small ones' promises (their answers) settled before the large one's batch began: two batches.
    expect(order).toEqual(["small 1 settled", "small 2 settled", "small 3 settled", "big settled"]);
    expect(counts).toEqual({ begin: 2, commit: 2 });
    expect(rows(db)).toEqual([1, 2, 3, 100]);
  });

  it("gives each alone unit its own batch, in order; small units queued while one runs take the next batch; an async alone unit holds its batch", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const batches: number[][] = [];
    const seen = () => batches.push(rows(db));
    const a = tx.run(
      async () => {
        db.prepare("INSERT INTO t VALUES (10)").run();
        await Promise.resolve();
        // Queued while the alone unit holds its batch: not in it.
        void tx.run(() => db.prepare("INSERT INTO t VALUES (1)").run()).then(seen);
        await new Promise((resolve) => setTimeout(resolve, 5));
        db.prepare("INSERT INTO t VALUES (11)").run();
      },
      { alone: true },
    ).then(seen);
    const b = tx.run(() => db.prepare("INSERT INTO t VALUES (20)").run(), { alone: true }).then(seen);
    await Promise.all([a, b]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(batches[0]).toEqual([10, 11]);
    expect(batches.length).toBe(3);
    expect(rows(db)).toEqual([1, 10, 11, 20]);
    expect(counts).toEqual({ begin: 3, commit: 3 });
  });

  it("rolls back a failing alone unit alone; the next ones still run; close() commits alone units still queued", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const failing = settle(
      tx.run(
        () => {
          db.prepare("INSERT INTO t VALUES (1)").run();
          throw new Error("refused");
        },
        { alone: true },
      ),
    );
    const after = tx.run(() => db.prepare("INSERT INTO t VALUES (2)").run(), { alone: true });
    expect((await failing).ok).toBe(false);
    await after;
    expect(rows(db)).toEqual([2]);
    const pending = tx.run(() => db.prepare("INSERT INTO t VALUES (3)").run(), { alone: true });
    tx.close();
    await expect(pending).resolves.toBeDefined();
    expect(rows(db)).toEqual([2, 3]);
    await expect(tx.run(() => undefined, { alone: true })).rejects.toBeInstanceOf(ClosedError);
  });
});

describe("commit and rollback hooks", () => {
  it("runs before-commit hooks inside the batch's transaction, once per batch", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const seen: boolean[] = [];
    tx.onBeforeCommit(() => {
      seen.push(db.inTransaction);
      db.prepare("INSERT INTO t (n) VALUES (99)").run();
    });
    await Promise.all([1, 2, 3].map((n) => tx.run(() => db.prepare("INSERT INTO t (n) VALUES (?)").run(n))));
    expect(seen).toEqual([true]);
    expect(rows(db)).toEqual([1, 2, 3, 99]);
  });

  it("tells rollback listeners whether one savepoint or the whole batch was rolled back", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const rollbacks: boolean[] = [];
    tx.onRollback((whole) => rollbacks.push(whole));
    await expect(
      tx.run(() => {
        throw new Error("one request fails");
      }),
    ).rejects.toThrow();
    expect(rollbacks).toEqual([false]);
    tx.onBeforeCommit(() => {
      throw new Error("batch refused");
    });
    const batch = tx.run(() => db.prepare("INSERT INTO t (n) VALUES (7)").run());
    await expect(batch).rejects.toThrow("batch refused");
    expect(rollbacks).toEqual([false, true]);
    expect(rows(db)).toEqual([]);
  });
});

describe("GroupCommit: async units of work", () => {
  const insert = (db: Db, n: number) => db.prepare("INSERT INTO t VALUES (?)").run(n);

  it("hands each unit its work handle", async () => {
    const db = scratchDb();
    const handle = { name: "stores" };
    const tx = new GroupCommit(db, handle);
    expect(await tx.run((w) => w)).toBe(handle);
  });

  it("runs units one at a time: a unit started while another awaits begins only after it settles", async () => {
    const { db, counts } = countingDb(scratchDb());
    const tx = new GroupCommit(db);
    const order: string[] = [];
    const a = tx.run(async () => {
      order.push("a:start");
      insert(db, 1);
      await Promise.resolve();
      await Promise.resolve();
      // a read-modify-write across awaits sees no other unit's rows in between
      const seen = rows(db);
      insert(db, 2);
      order.push("a:end");
      return seen;
    });
    const b = tx.run(() => {
      order.push("b");
      insert(db, 3);
    });
    expect(order).toEqual([]); // both queued for the turn's batch
    tx.flush(); // a starts and awaits; b waits for it; the COMMIT waits for both
    expect(order).toEqual(["a:start"]);
    expect(await a).toEqual([1]);
    await b;
    expect(order).toEqual(["a:start", "a:end", "b"]);
    expect(rows(db)).toEqual([1, 2, 3]);
    // one batch: both units in one transaction
    expect(counts).toEqual({ begin: 1, commit: 1 });
  });

  it("rolls back only a rejecting unit's changes, including those made before its await", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const a = settle(tx.run(() => insert(db, 1)));
    const b = settle(
      tx.run(async () => {
        insert(db, 2);
        await Promise.resolve();
        insert(db, 22);
        throw new Error("late failure");
      }),
    );
    const c = settle(tx.run(() => insert(db, 3)));
    const results = await Promise.all([a, b, c]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true]);
    expect(rows(db)).toEqual([1, 3]);
  });

  it("commits after a unit that awaits a real timer, with its writes", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const slow = tx.run(async () => {
      insert(db, 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      insert(db, 2);
    });
    const queued = tx.run(() => insert(db, 3));
    await Promise.all([slow, queued]);
    expect(rows(db)).toEqual([1, 2, 3]);
    expect(db.inTransaction).toBe(false);
  });

  it("refuses units queued behind a busy one once closed", async () => {
    const db = scratchDb();
    const tx = new GroupCommit(db);
    const slow = tx.run(async () => {
      insert(db, 1);
      await new Promise((resolve) => setTimeout(resolve, 10));
    });
    const queued = settle(tx.run(() => insert(db, 2)));
    tx.close();
    await slow;
    const result = await queued;
    expect(result.ok).toBe(false);
    expect((result as { error: unknown }).error).toBeInstanceOf(ClosedError);
    // the busy unit's write was committed; the refused one never ran
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rows(db)).toEqual([1]);
  });
});

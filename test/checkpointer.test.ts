import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from "../src/store/sqlite/checkpointer.js";
import type { Checkpointer } from "../src/store/sqlite/checkpointer.js";
import { openDatabase, setMeta } from "../src/store/sqlite/db.js";
import type { Db } from "../src/store/sqlite/db.js";
import { GroupCommit } from "../src/store/sqlite/group-commit.js";

const open: { dir: string; db: Db; checkpointer: Checkpointer }[] = [];

afterEach(async () => {
  for (const { dir, db, checkpointer } of open.splice(0)) {
    await checkpointer.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A WAL database file in a fresh directory, its group commit and a running checkpointer. */
function fileDb() {
  const dir = mkdtempSync(join(tmpdir(), "ev-checkpointer-"));
  const file = join(dir, "vault.db");
  const db = openDatabase(file);
  const tx = new GroupCommit<Db>(db, db);
  const checkpointer = startCheckpointer(db, file, tx);
  open.push({ dir, db, checkpointer });
  return { db, tx, file, checkpointer };
}

/** Polls `check` every 20 ms until it is true; false after `ms` milliseconds. */
async function eventually(check: () => boolean, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** A text written into the database: found in the main file only once a checkpoint copied its page there. */
const marker = (): string => `checkpoint-marker-${Math.random().toString(36).slice(2)}`;
const inMainFile = (file: string, text: string): boolean => readFileSync(file).includes(Buffer.from(text));

describe("checkpointer (WAL checkpoints off the event loop)", () => {
  it("takes the connection's automatic checkpoint over once its thread is ready", async () => {
    const { db } = fileDb();
    expect(await eventually(() => db.pragma("wal_autocheckpoint", { simple: true }) === FALLBACK_AUTOCHECKPOINT_PAGES)).toBe(true);
  });

  it("copies a committed batch into the main file, although the connection checkpoints nothing itself", async () => {
    const { db, tx, file } = fileDb();
    await eventually(() => db.pragma("wal_autocheckpoint", { simple: true }) === FALLBACK_AUTOCHECKPOINT_PAGES);
    const text = marker();
    await tx.run((w) => setMeta(w, "bench", text));
    // A few pages: far below both automatic checkpoints, so only the thread can have copied them.
    expect(inMainFile(file, text)).toBe(false);
    expect(await eventually(() => inMainFile(file, text))).toBe(true);
    expect(db.prepare("SELECT value FROM meta WHERE name = 'bench'").pluck().get()).toBe(text);
  });

  it("stop() ends the thread and gives the automatic checkpoint back; commits go on", async () => {
    const { db, tx, file, checkpointer } = fileDb();
    await eventually(() => db.pragma("wal_autocheckpoint", { simple: true }) === FALLBACK_AUTOCHECKPOINT_PAGES);
    await checkpointer.stop();
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    const text = marker();
    await tx.run((w) => setMeta(w, "after", text));
    await new Promise((resolve) => setTimeout(resolve, 400));
    // Nobody checkpoints a small WAL now: the row is in the WAL only, and readable.
    expect(inMainFile(file, text)).toBe(false);
    expect(db.prepare("SELECT value FROM meta WHERE name = 'after'").pluck().get()).toBe(text);
    await checkpointer.stop();
  });
});

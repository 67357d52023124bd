import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../src/crypto/cipher.js";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import type { Db } from "../../../src/store/sqlite/db.js";
import { SYSTEM_ORIGIN } from "../../../src/domain/events.js";
import { GLOBAL_SCOPE } from "../../../src/domain/secrets/model.js";
import { createLogger } from "../../../src/log/log.js";
import { createSqliteVault } from "../../support/helpers.js";
import type { Vault } from "../../../src/assembly/vault.js";
import type { SqliteEngine } from "../../../src/store/sqlite/engine.js";

const open: { dir: string; db: Db; vault: Vault<SqliteEngine> }[] = [];

afterEach(() => {
  for (const { dir, db, vault } of open.splice(0)) {
    vault.engine.walScrubber.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A vault on a real WAL database file in a fresh directory, with a settable clock. */
function fileVault() {
  const dir = mkdtempSync(join(tmpdir(), "ev-walscrub-"));
  const db = openDatabase(join(dir, "vault.db"));
  let t = Date.now();
  const vault = createSqliteVault(db, {
    cipher: new ValueCipher(generateRootKey()),
    log: createLogger("silent"),
    masterKey: "m".repeat(32),
    now: () => t,
    activeLimit: () => null,
    publicUrl: "http://vault.test",
    maxValueBytes: 65_536,
    trustProxy: false,
  });
  open.push({ dir, db, vault });
  return { dir, db, vault, advance: (ms: number) => (t += ms) };
}

/** The stored ciphertext of a live secret, read straight from its row. */
function ciphertextOf(db: Db, key: string): Buffer {
  const row = db.prepare("SELECT ciphertext FROM secrets WHERE scope = 'global' AND key = ?").get(key) as { ciphertext: Buffer };
  return row.ciphertext;
}

/** Whether any file of the data dir holds these bytes. */
function anyFileHolds(dir: string, bytes: Buffer): string[] {
  return readdirSync(dir).filter((name) => readFileSync(join(dir, name)).includes(bytes));
}

async function waitUntilAbsent(dir: string, bytes: Buffer): Promise<string[]> {
  const deadline = Date.now() + 5000;
  let holders = anyFileHolds(dir, bytes);
  while (holders.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    holders = anyFileHolds(dir, bytes);
  }
  return holders;
}

const VALUE = "correct horse battery staple ".repeat(20);

describe("destroyed values leave no ciphertext in the data dir's files", () => {
  it("after a burn", async () => {
    const { dir, db, vault } = fileVault();
    await vault.tx.run((w) => vault.secrets.create(w, { scope: GLOBAL_SCOPE, key: "once", value: VALUE, maxReads: 1 }, SYSTEM_ORIGIN));
    const ciphertext = ciphertextOf(db, "once");
    expect(anyFileHolds(dir, ciphertext).length).toBeGreaterThan(0);
    const read = await vault.tx.run((w) => vault.secrets.retrieve(w, GLOBAL_SCOPE, "once", { principalKeyId: null }, SYSTEM_ORIGIN));
    expect(read.value).toBe(VALUE);
    expect(await waitUntilAbsent(dir, ciphertext)).toEqual([]);
  });

  it("after a delete", async () => {
    const { dir, db, vault } = fileVault();
    await vault.tx.run((w) => vault.secrets.create(w, { scope: GLOBAL_SCOPE, key: "gone", value: VALUE }, SYSTEM_ORIGIN));
    const ciphertext = ciphertextOf(db, "gone");
    await vault.tx.run((w) => vault.secrets.remove(w, GLOBAL_SCOPE, "gone", SYSTEM_ORIGIN));
    expect(await waitUntilAbsent(dir, ciphertext)).toEqual([]);
  });

  it("after an expiry by the sweeper", async () => {
    const { dir, db, vault, advance } = fileVault();
    await vault.tx.run((w) => vault.secrets.create(w, { scope: GLOBAL_SCOPE, key: "ttl", value: VALUE, ttlSeconds: 1 }, SYSTEM_ORIGIN));
    const ciphertext = ciphertextOf(db, "ttl");
    advance(2000);
    expect(await vault.tx.run((w) => vault.secrets.expireDue(w, 100, SYSTEM_ORIGIN))).toBe(1);
    expect(await waitUntilAbsent(dir, ciphertext)).toEqual([]);
  });

  it("keeps a live secret's ciphertext readable (the scrub only checkpoints)", async () => {
    const { vault } = fileVault();
    await vault.tx.run((w) => vault.secrets.create(w, { scope: GLOBAL_SCOPE, key: "kept", value: VALUE }, SYSTEM_ORIGIN));
    await vault.tx.run((w) => vault.secrets.create(w, { scope: GLOBAL_SCOPE, key: "burn", value: "x", maxReads: 1 }, SYSTEM_ORIGIN));
    await vault.tx.run((w) => vault.secrets.retrieve(w, GLOBAL_SCOPE, "burn", { principalKeyId: null }, SYSTEM_ORIGIN));
    expect(vault.engine.walScrubber.scrubNow()).toBe(true);
    const read = await vault.tx.run((w) => vault.secrets.retrieve(w, GLOBAL_SCOPE, "kept", { principalKeyId: null }, SYSTEM_ORIGIN));
    expect(read.value).toBe(VALUE);
  });
});

// The in-process vault the in-process benchmarks (wal-frames.mjs, in-process.mjs) measure: built from dist/,
// so run `npm run build` first.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger, createVault, openDatabase, ValueCipher } from "../dist/index.js";

/** The value of the benchmark's secret: the 26 characters `../shared/bench/compare.sh` stores. */
export const VALUE = "benchmark-value-0123456789";

/** The audit origin of a master-key request from 127.0.0.1 (domain/events.ts Origin). */
const masterOrigin = () => ({ actor: "master", principalId: null, ip: "127.0.0.1", recorded: false });

/**
 * Runs `body` against a vault in this process, on a new temporary file database with the server's
 * settings (openDatabase: WAL, synchronous=FULL) and a random master key, holding one secret,
 * `bench` in the global scope, with VALUE and no TTL or read limit.
 *
 * `body` gets `{ vault, db, file, masterKey, read }`: `file` is the database's path (its WAL is
 * `${file}-wal`), `read()` one retrieve of `bench` in a unit of work of the group commit (a Promise
 * that settles after its batch's COMMIT). The database is closed and its directory removed when
 * `body` settles, also when it throws.
 * @param label names the temporary directory (`vault-<label>-XXXXXX` under the OS's tmpdir).
 * @returns what `body` returns.
 * @throws whatever building the vault, creating the secret or `body` throws.
 */
export async function withLocalVault(label, body) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vault-${label}-`));
  const file = path.join(dir, "vault.db");
  const db = openDatabase(file);
  try {
    const masterKey = crypto.randomBytes(24).toString("hex");
    const vault = createVault({
      db,
      cipher: new ValueCipher(crypto.randomBytes(32)),
      log: createLogger("error"),
      masterKey,
      now: () => Date.now(),
      activeLimit: () => null,
      publicUrl: "http://127.0.0.1",
      maxValueBytes: 65536,
      trustProxy: false,
    });
    await vault.tx.run((w) => vault.secrets.create(w, { scope: "global", key: "bench", value: VALUE }, masterOrigin()));
    const read = () => vault.tx.run((w) => vault.secrets.retrieve(w, "global", "bench", { principalKeyId: null }, masterOrigin()));
    return await body({ vault, db, file, masterKey, read });
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// The in-process vault the in-process benchmarks (wal-frames.mjs, in-process.mjs) measure: built from dist/,
// so run `npm run build` first.
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger, createVault, openDatabase, SqliteEngine, ValueCipher } from "../dist/internal.js";

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
 * `${file}-wal`), `read(key = "bench")` one retrieve of a global key in a unit of work of the group
 * commit (a Promise that settles after its batch's COMMIT). `options.dataDir`: a prepared data
 * directory (bench/scale.mjs) whose vault.db is copied and whose encryption.key is used, instead of
 * a new database holding `bench`. The database is closed and its directory removed when
 * `body` settles, also when it throws.
 * @param label names the temporary directory (`vault-<label>-XXXXXX` under the OS's tmpdir).
 * @returns what `body` returns.
 * @throws whatever building the vault, creating the secret or `body` throws.
 */
export async function withLocalVault(label, body, options = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vault-${label}-`));
  const file = path.join(dir, "vault.db");
  // A prepared data directory (bench/scale.mjs `<SCALE_DATA_DIR>/n<N>/data`) is copied, never opened in place.
  if (options.dataDir !== undefined) fs.copyFileSync(path.join(options.dataDir, "vault.db"), file);
  const root =
    options.dataDir !== undefined
      ? Buffer.from(fs.readFileSync(path.join(options.dataDir, "encryption.key"), "utf8").trim(), "hex")
      : crypto.randomBytes(32);
  const db = openDatabase(file);
  const cipher = new ValueCipher(root);
  const log = createLogger("error");
  const engine = new SqliteEngine(db, { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null, log });
  try {
    const masterKey = crypto.randomBytes(24).toString("hex");
    const vault = createVault(engine, {
      cipher,
      log,
      masterKey,
      now: () => Date.now(),
      activeLimit: () => null,
      publicUrl: "http://127.0.0.1",
      maxValueBytes: 65536,
      trustProxy: false,
    });
    if (options.dataDir === undefined) {
      await vault.tx.run((w) => vault.secrets.create(w, { scope: "global", key: "bench", value: VALUE }, masterOrigin()));
    }
    const read = (key = "bench") =>
      vault.tx.run((w) => vault.secrets.retrieve(w, "global", key, { principalKeyId: null }, masterOrigin()));
    return await body({ vault, db, file, masterKey, read });
  } finally {
    await engine.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

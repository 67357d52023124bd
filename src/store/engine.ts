import type { ValueCipher } from "../crypto/cipher.js";
import type { UnitOfWork, Work } from "./work.js";

/** Root key id -> audit chain key, for every root key loaded (ValueCipher.auditChainKeys). */
export type ChainKeys = ReadonlyMap<string, Buffer>;

/**
 * What `audit verify` found, for the console's overview: the rows checked,
 * and where the first break is (`at`: a row id on SQLite, `chain#seq` on
 * PostgreSQL) with its reason. `walked`: the rows this check read (the
 * console's check goes on from the rows an earlier one verified, which
 * `rows` counts too).
 */
export type AuditCheck = { ok: true; rows: number; walked?: number } | { ok: false; rows: number; walked?: number; at: string; reason: string };

/**
 * Whether the database file a process opened is still the one at its path
 * (SQLite: store/sqlite/db-file-watch.ts DbFileWatch, which stats the path
 * at most once a second); /health answers 503 once it is not.
 */
export interface DbFileCheck {
  /** The database file, e.g. `<data dir>/vault.db`. */
  readonly path: string;
  /** True while the path still names the file that was opened. */
  present(): boolean;
}

/**
 * The storage engine under a vault (docs/architecture.md, "The engine
 * seam"): SQLite (store/sqlite/engine.ts: one file, the group commit, the
 * WAL scrub, the database-file watch) or PostgreSQL (store/pg/engine.ts: a
 * pool, a transaction per unit of work, several nodes). The vault is built
 * over it once (assembly/vault.ts createVault) and never asks which one it has,
 * except through the hooks below.
 */
export interface Engine {
  /** Which engine: SQLite is the default, PostgreSQL runs with VAULT_DATABASE_URL. */
  readonly kind: "sqlite" | "pg";
  /** The console's name for it ("SQLite file", "PostgreSQL"). */
  readonly label: string;
  /** The only way to the database: one transaction per unit (store/work.ts). */
  readonly tx: UnitOfWork<Work>;
  /**
   * Brings the schema up to date (idempotent; the openers already ran it):
   * schema.sql's sections on SQLite, schema-pg.sql's under an advisory lock on PostgreSQL.
   * @throws Error when the database was written by a newer version.
   */
  migrate(): Promise<void>;
  /**
   * Refuses a wrong encryption key (store/root-keys.ts, the one rule for both
   * engines) and records the current key's id; may turn legacy envelopes off.
   * @throws WrongKeyError naming what to set.
   */
  verifyRootKeys(cipher: ValueCipher): Promise<void>;
  /**
   * Opens the audit chain for writing with the current root key: its
   * segment record and signed head are checked before the first append
   * (docs/audit.md). An engine may answer at once.
   * @returns false when the segment record or head cannot be authenticated (the caller logs it).
   */
  openAuditChain(currentKeyId: string, keys: ChainKeys): boolean | Promise<boolean>;
  /**
   * The console's check of the audit log (docs/console.md, "Audit"): every
   * row's hash and link since the last state the engine verified, without
   * holding the event loop; `audit verify` (the CLI) is the full check.
   */
  verifyAudit(keys: ChainKeys): Promise<AuditCheck>;
  /** Engine events the vault's parts follow; every hook may be absent (the engine has no such event). */
  readonly hooks: EngineHooks;
  /** Refuses new units of work, finishes what is pending and closes the storage (graceful stop). */
  close(): Promise<void>;
}

/** What a vault wires to its engine (assembly/vault.ts). */
export interface EngineHooks {
  /**
   * True when one process writes the database (SQLite): caches of rows
   * (the outbox's subscribers) may be kept, dropped at every rollback.
   */
  readonly singleWriter: boolean;
  /** Told of every rolled-back unit or batch (SQLite's group commit). */
  onRollback?(hook: () => void): void;
  /** Told of every commit: how many units it held and how long it took, milliseconds. */
  onCommitted?(hook: (units: number, ms: number) => void): void;
  /** Runs just before each COMMIT; a throw refuses the commit (SQLite's group commit). */
  onBeforeCommit?(hook: () => void): void;
  /** A stored value was destroyed (burn, delete, expiry): SQLite scrubs it out of its WAL. */
  valueDestroyed?(): void;
  /**
   * The storage is still where it was opened (SQLite's database file; /health
   * answers 503 while it is not); absent: always.
   */
  readonly file?: DbFileCheck | undefined;
}

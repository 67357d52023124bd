/*
 * The shapes the offline tools (backup, restore, rekey, audit verify and
 * anchor, migration to PostgreSQL; docs/operations.md, docs/audit.md,
 * docs/scaling.md) share with the engine parts that implement them, in a
 * module neither engine owns: src/store/tools.ts is their entry, and
 * src/ops and src/cli use it without importing an engine.
 */
import type { ChainReport } from "../model/audit/verify.js";
import type { ChainKeys } from "../model/audit/chain.js";
import type { PgChainReport } from "./pg/audit/verify.js";

/** A file that cannot be restored: the message says why; nothing was replaced. */
export class RestoreRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreRefused";
  }
}

/** Row counts of a vault database, for the operator. */
export interface VaultCounts {
  secrets: { active: number; sealed: number; expired: number };
  scopedKeys: number;
  principalKeys: number;
  orgs: number;
  principals: number;
  auditRows: number;
  webhooks: number;
}

/** What a backup copy holds, once checked (sizes in pages and bytes). */
export interface CopyFacts {
  pages: number;
  bytes: number;
  schemaVersion: number;
  counts: VaultCounts;
}

/** What rekeyDatabase() did. */
export interface RekeyReport {
  /** Values re-encrypted under the current key and envelope version. */
  rewrapped: number;
  /** Values that were already current. */
  alreadyCurrent: number;
  /** Values that did not open (damaged): left as they were. */
  failed: number;
  /** Values still under an old key or an old envelope version afterwards. */
  remaining: number;
}

/** The held lock of a data dir; release() lets the next process take it. */
export interface DataDirLock {
  /** The lock file, `<data dir>/vault.lock`. */
  path: string;
  /** Gives the lock up (idempotent). The kernel also drops it when the process dies. */
  release: () => void;
}

/** A SQLite audit log seen from one read transaction (rows and head from one snapshot). */
export interface AuditSnapshot {
  /** The verification of the whole chain (docs/audit.md). */
  report: ChainReport;
  /** The last row's id and hash; undefined when the log is empty. */
  last(): { id: number; hash: string } | undefined;
  /** The hash of row `id`; undefined when there is no such row. */
  hashAt(id: number): string | undefined;
}

/** A SQLite data dir's audit log, opened read-only (nothing migrated or written). */
export interface SqliteAuditLog {
  /**
   * Runs `inspect` inside one read transaction, after verifying the chain with `keys`.
   * @returns what `inspect` returns.
   */
  snapshot<T>(keys: ChainKeys, inspect: (view: AuditSnapshot) => T): T;
  /** Closes the database. */
  close(): void;
}

/**
 * The tables `migrate --from-sqlite` copies, in copy order: parents before
 * children (foreign keys), the audit log last.
 */
export const MIGRATED_TABLES: readonly string[] = [
  "meta",
  "orgs",
  "roles",
  "principals",
  "principal_keys",
  "oidc_identities",
  "scoped_keys",
  "secrets",
  "reveal_checks",
  "receipts",
  "file_metas",
  "requests",
  "webhooks",
  "webhook_events",
  "webhook_deliveries",
  "webhook_attempts",
  "audit",
];

/** How many rows each table holds, on each side of a migration. */
export type CopyCounts = Record<string, { sqlite: number; postgres: number }>;

/** The SQLite side of `migrate --from-sqlite` (docs/scaling.md, "Moving a SQLite vault"), opened read-only. */
export interface MigrationSource {
  /** The file's schema version (user_version). */
  readonly schemaVersion: number;
  /** Whether reads are logged that its secrets' rows do not count yet (a vault that did not stop cleanly). */
  holdsReadsToReplay(): boolean;
  /**
   * Checks that every table in `tables` has exactly the columns of this
   * build's schema (schema.sql), and keeps them as the columns to copy.
   * @throws ConfigError naming the table and the columns that differ.
   */
  checkColumns(tables: readonly string[]): void;
  /** The columns of `table` that are copied (checkColumns' list, less those the PostgreSQL schema does not have). */
  copiedColumns(table: string): string[];
  /** The number of rows of `table`. */
  count(table: string): number;
  /** The rows of `table` in creation order: the copied columns, plus `__rowid`. */
  rows(table: string): Iterable<Record<string, unknown>>;
  /** The audit log's last row (its id, `at` and hash); undefined when empty. */
  lastAudit(): { id: number; at: number; hash: string } | undefined;
  /** Closes the file. */
  close(): void;
}

/** A PostgreSQL audit log, every writer's chain (docs/audit.md). */
export interface PgAuditLog {
  /** The head of every chain that has rows, by chain name. */
  heads(): Promise<{ chain: string; seq: number; hash: string }[]>;
  /** The hash of row `seq` of `chain`; undefined when there is no such row. */
  hashAt(chain: string, seq: number): Promise<string | undefined>;
  /** Verifies every chain with `keys` (store/pg/audit/verify.ts). */
  verify(keys: ChainKeys): Promise<PgChainReport>;
  /** Closes its connections. */
  end(): Promise<void>;
}

/** The PostgreSQL side of `migrate --from-sqlite`: a database with this build's schema. */
export interface MigrationTarget {
  /**
   * Copies every table of `source` in one transaction, then compares the
   * row counts; `progress` gets one line per table.
   * @returns the counts per table.
   * @throws ConfigError for a non-empty target or counts that differ (rolled back).
   */
  copyFrom(source: MigrationSource, progress: (line: string) => void): Promise<CopyCounts>;
  /** Closes its connections. */
  end(): Promise<void>;
}

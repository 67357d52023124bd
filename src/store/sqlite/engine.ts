import type { ValueCipher } from "../../crypto/cipher.js";
import { openChain } from "./audit/chain.js";
import { verifyAuditChainFrom } from "./audit/verify.js";
import type { WalkState } from "../../model/audit/walk.js";

/** Rows the console's incremental audit check walks per turn of the event loop (a few milliseconds to tens of milliseconds of work). */
const VERIFY_CHUNK = 500;
import type { Logger } from "../../log/log.js";
import type { AuditCheck, ChainKeys, Engine, EngineHooks } from "../engine.js";
import type { Work } from "../work.js";
import { migrate } from "./migrate.js";
import type { Db } from "./db.js";
import type { DbFileWatch } from "./db-file-watch.js";
import { GroupCommit } from "./group-commit.js";
import { createSqliteWork } from "./index.js";
import type { SqliteWork } from "./index.js";
import { verifyRootKeys } from "./root-keys.js";
import { WalScrubber } from "./wal-scrub.js";

/** What the SQLite engine is opened with, beside its database. */
export interface SqliteEngineOptions {
  /** The key audit rows are MACed with (the current root key's chain key); null: plain SHA-256, for tools that only read. */
  auditChainKey: Buffer | null;
  log: Logger;
  /** The database file's identity (none for `:memory:`): while it is deleted or replaced, commits are refused. */
  file?: DbFileWatch | undefined;
}

/**
 * The SQLite engine over one open, migrated database: its stores (built
 * once, statements prepared once), the group commit (one transaction per
 * event-loop turn), the audit chain's batch buffer, the WAL scrub and the
 * database-file watch (docs/architecture.md, "The engine seam").
 */
export class SqliteEngine implements Engine {
  readonly kind = "sqlite" as const;
  readonly label = "SQLite file";
  readonly tx: GroupCommit<Work>;
  readonly work: SqliteWork;
  /** Truncates the WAL after a value is destroyed; close() stops it before closing the database. */
  readonly walScrubber: WalScrubber;
  readonly hooks: EngineHooks;

  private readonly log: Logger;
  /** How far the console's incremental audit check got (verifyAudit); undefined before the first. */
  private verified: WalkState | undefined;

  constructor(
    readonly db: Db,
    options: SqliteEngineOptions,
  ) {
    this.log = options.log;
    this.work = createSqliteWork(db, { auditChainKey: options.auditChainKey });
    const tx = new GroupCommit<Work>(db, this.work, this.work.commits);
    this.tx = tx;
    this.work.audit.attach(tx);
    // After the audit store: its pre-commit hook moves the heads the tally writes back.
    this.work.tally.attach(tx);
    const scrubber = new WalScrubber({ db, tx, log: options.log });
    this.walScrubber = scrubber;
    this.hooks = {
      singleWriter: true,
      onRollback: (hook) => tx.onRollback(() => hook()),
      onCommitted: (hook) => tx.onCommitted(hook),
      onBeforeCommit: (hook) => tx.onBeforeCommit(hook),
      valueDestroyed: () => scrubber.markDirty(),
      file: options.file,
    };
  }

  async migrate(): Promise<void> {
    migrate(this.db);
  }

  async verifyRootKeys(cipher: ValueCipher): Promise<void> {
    verifyRootKeys(this.db, cipher);
  }

  openAuditChain(currentKeyId: string, keys: ChainKeys): boolean {
    return openChain(this.db, currentKeyId, keys);
  }

  /**
   * The console's check (docs/console.md, "Audit"): incremental from the
   * last state this engine verified, in chunks of VERIFY_CHUNK rows with the
   * event loop free between them, so a view at a large log does not hold it
   * (store/sqlite/audit/verify.ts verifyAuditChainFrom). A break is not cached: the next
   * check walks again from the last good state.
   */
  async verifyAudit(keys: ChainKeys): Promise<AuditCheck> {
    const before = this.verified?.rows ?? 0;
    for (;;) {
      const { report, state, more } = verifyAuditChainFrom(this.db, keys, this.verified, VERIFY_CHUNK);
      const walked = report.rows - before;
      if (!report.ok) return { ok: false, rows: report.rows, walked, at: String(report.brokenId), reason: report.reason };
      this.verified = state;
      if (more !== true) return { ok: true, rows: report.rows, walked };
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  async close(): Promise<void> {
    this.tx.close();
    try {
      this.work.tally.flushAll(this.db);
    } catch (err) {
      // The counts are in the audit log: the next open replays them (tally/read-replay.ts).
      this.log.warn({ err }, "read counts not written back at stop; the next start replays them");
    }
    this.walScrubber.stop();
    this.db.close();
  }
}

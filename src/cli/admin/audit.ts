import { Command } from "commander";
import { ConfigError } from "../../config.js";
import { openPgAuditLog, openSqliteAuditLog, redactUrl } from "../../store/tools.js";
import type { PgAuditLog, PgChainReport } from "../../store/tools.js";
import type { ChainReport, MissingKey } from "../../model/audit/verify.js";
import type { ChainKeys } from "../../model/audit/chain.js";
import { dataDirOf, loadCipher } from "../../ops/common.js";
import type { ValueCipher } from "../../crypto/cipher.js";
import { anchorPg, anchorSqlite } from "./audit-anchor.js";
import type { AnchoredPg, AnchoredSqlite } from "./audit-anchor.js";
import { parseAnchor } from "../../domain/audit/anchor.js";
import type { Anchor } from "../../domain/audit/anchor.js";
import { EXIT_CHAIN_BROKEN, EXIT_KEY_MISSING, EXIT_OK } from "../exit-codes.js";
import { parseWords } from "../parse-words.js";

/** Where the command writes: stdout and stderr by default, strings in tests. */
export interface CommandOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

const processOutput: CommandOutput = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/**
 * Checks the audit hash chain of a data directory's database, read-only:
 * opens `<dir>/vault.db` without migrating or writing anything.
 * @param keys loads the chain keys of the root keys (current and previous),
 *   once the database is known to be there.
 * @throws ConfigError when there is no database or no audit table there.
 */
export function verifyDataDir(dataDir: string, keys: () => ChainKeys): ChainReport {
  const log = openSqliteAuditLog(dataDir);
  try {
    // One read transaction (SqliteAuditLog.snapshot): the rows and the head come from one snapshot, whatever a running vault writes meanwhile.
    return log.snapshot(keys(), (view) => view.report);
  } finally {
    log.close();
  }
}

/** The flags of `audit verify` and `audit head` (commander's names). */
export interface AuditCheckFlags {
  dataDir?: string | undefined;
  databaseUrl?: string | undefined;
  anchor?: string | undefined;
}

/** Declares `audit verify [--data-dir DIR | --database-url URL] [--anchor LINE]` or `audit head [...]`. */
export function declareAuditCheck(command: Command, sub: "verify" | "head"): Command {
  command
    .description(sub === "verify" ? "check the hash chains (read-only)" : "verify, then print one signed anchor line")
    .option("--data-dir <DIR>", "the vault's data directory (default: VAULT_DATA_DIR, then ./.vault)")
    .option("--database-url <URL>", "every writer's chain on PostgreSQL (default: VAULT_DATABASE_URL unless --data-dir)");
  if (sub === "verify") command.option("--anchor <LINE>", "also fail when the log is shorter than, or diverges from, LINE (from audit head)");
  const example = sub === "verify" ? 'audit verify --anchor "$(tail -n 1 /offsite/vault-anchors.txt)"' : "audit head >> /offsite/vault-anchors.txt";
  return command.addHelpText("after", `\nExamples:\n  ephemeral-vault ${example}`);
}

/**
 * `ephemeral-vault audit verify|head` from its words (`["verify", "--data-dir",
 * DIR]`), parsed by commander as the command line does: runAuditCheck().
 * @returns runAuditCheck()'s code; 0 after --help.
 * @throws ConfigError for a usage error (exit 2) and as runAuditCheck().
 */
export async function auditCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  output: CommandOutput = processOutput,
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "verify" && sub !== "head") throw new ConfigError('audit needs "verify" or "head"; see ephemeral-vault --help');
  const command = declareAuditCheck(new Command(sub), sub);
  if (parseWords(command, rest) === "shown") return EXIT_OK;
  return runAuditCheck(sub, command.opts<AuditCheckFlags>(), env, output);
}

/**
 * `ephemeral-vault audit verify [--anchor LINE]` and `ephemeral-vault audit
 * head`, on `--data-dir DIR` (default VAULT_DATA_DIR, then ./.vault) or
 * `--database-url URL` (or VAULT_DATABASE_URL). `verify` walks the audit
 * hash chain(s) and reports the first broken row; with `--anchor` the log
 * must also still hold what the anchor line recorded. `head` verifies the
 * log and prints its anchor line (domain/audit/anchor.ts, docs/audit.md).
 * @returns 0 when the chain is intact (and holds the anchor; `head`: the
 *   line printed), EXIT_CHAIN_BROKEN (1) when it is not, EXIT_KEY_MISSING
 *   (3) when rows are keyed with a root key that is not loaded (the message
 *   names its id and the setting that loads it).
 * @throws ConfigError for a missing database, and an anchor line that is
 *   malformed or not authentic (exit 2).
 */
export async function runAuditCheck(
  sub: "verify" | "head",
  flags: AuditCheckFlags,
  env: Record<string, string | undefined> = process.env,
  output: CommandOutput = processOutput,
): Promise<number> {
  const databaseUrl = flags.databaseUrl ?? (flags.dataDir === undefined ? env.VAULT_DATABASE_URL : undefined);
  if (databaseUrl !== undefined && databaseUrl !== "") return verifyPostgres(databaseUrl, env, output, sub, flags.anchor);
  const dataDir = dataDirOf(flags.dataDir, env);
  if (sub === "head" || flags.anchor !== undefined) {
    const log = openSqliteAuditLog(dataDir);
    try {
      const cipher = loadCipher(dataDir, {}, env);
      const anchored = anchorSqlite(log, cipher, anchorOf(flags.anchor, cipher));
      return reportAnchored(anchored, output, anchored.report.ok ? intactLine(anchored.report) : brokenLine(anchored.report));
    } finally {
      log.close();
    }
  }
  // The chain is keyed with the root key, never stored in the database (docs/audit.md): load it as the server does.
  const report = verifyDataDir(dataDir, () => loadCipher(dataDir, {}, env).auditChainKeys());
  output.out(report.ok ? intactLine(report) : brokenLine(report));
  return exitOf(report);
}

/** 0 intact, EXIT_KEY_MISSING when a key is missing, else EXIT_CHAIN_BROKEN. */
function exitOf(report: { ok: boolean; missingKey?: MissingKey | undefined }): number {
  if (report.ok) return EXIT_OK;
  return report.missingKey === undefined ? EXIT_CHAIN_BROKEN : EXIT_KEY_MISSING;
}

/** The line of a chain that could not be verified for want of a key: its id and the setting that loads it. */
function missingKeyLine(missing: MissingKey, where: string, rows: number): string {
  return (
    `audit chain not verified: ${where} keyed with root key ${missing.keyId}, which is not loaded; ` +
    `set ${missing.setting} to that key and run audit verify again (${rows} rows before it verified; nothing found altered)\n`
  );
}

function intactLine(report: ChainReport & { ok: true }): string {
  return `audit chain intact: ${report.rows} rows, head ${report.head}\n`;
}

function brokenLine(report: ChainReport): string {
  if (!report.ok && report.missingKey !== undefined) return missingKeyLine(report.missingKey, `rows from ${report.brokenId} are`, report.rows);
  return report.ok ? intactLine(report) : `audit chain broken at row ${report.brokenId}: ${report.reason} (${report.rows} rows before it verified)\n`;
}

/**
 * The anchor given to `verify --anchor`, authenticated.
 * @throws ConfigError when the line is malformed or its MAC does not match.
 */
function anchorOf(line: string | undefined, cipher: ValueCipher): Anchor | undefined {
  if (line === undefined) return undefined;
  const anchor = parseAnchor(line, cipher);
  if (typeof anchor === "string") throw new ConfigError(`--anchor: ${anchor}`);
  return anchor;
}

/** Prints a verification with its anchor line or anchor verdict; the exit code. */
function reportAnchored(anchored: AnchoredSqlite | AnchoredPg, output: CommandOutput, verdict: string): number {
  if (!anchored.report.ok) {
    output.out(verdict);
    return exitOf(anchored.report);
  }
  if (anchored.line !== undefined) {
    output.out(`${anchored.line}\n`);
    return EXIT_OK;
  }
  if (anchored.anchorProblem !== undefined) {
    output.out(`audit log does not hold its anchor: ${anchored.anchorProblem}\n`);
    return EXIT_CHAIN_BROKEN;
  }
  output.out(verdict.replace(/\n$/, "; the anchor holds\n"));
  return EXIT_OK;
}

/**
 * `audit verify|head --database-url URL` (or VAULT_DATABASE_URL): every chain of
 * a PostgreSQL audit log (store/tools.ts openPgAuditLog), keyed with the root
 * keys of VAULT_ENCRYPTION_KEY and VAULT_PREVIOUS_ENCRYPTION_KEYS.
 * @returns 0 intact, EXIT_CHAIN_BROKEN when a chain is broken, EXIT_KEY_MISSING when a key is not loaded.
 * @throws ConfigError when the database cannot be reached or no key is given.
 */
async function verifyPostgres(
  url: string,
  env: Record<string, string | undefined>,
  output: CommandOutput,
  sub: "verify" | "head",
  anchorLine: string | undefined,
): Promise<number> {
  // The keys are read as the server reads them (no data dir on PostgreSQL).
  const { VAULT_DATABASE_URL: _url, ...keyEnv } = env;
  const cipher = loadCipher(":memory:", {}, keyEnv);
  const keys = cipher.auditChainKeys();
  const anchor = anchorOf(anchorLine, cipher);
  let log: PgAuditLog;
  try {
    log = await openPgAuditLog(url);
  } catch (err) {
    throw new ConfigError(`--database-url ${redactUrl(url)}: ${(err as Error).message}`);
  }
  try {
    if (sub === "head" || anchor !== undefined) {
      const anchored = await anchorPg(log, cipher, anchor);
      return reportAnchored(anchored, output, pgLine(anchored.report));
    }
    const report = await log.verify(keys);
    output.out(pgLine(report));
    return exitOf(report);
  } finally {
    await log.end();
  }
}

function pgLine(report: PgChainReport): string {
  if (!report.ok && report.missingKey !== undefined) return missingKeyLine(report.missingKey, `chain ${report.chain} from seq ${report.seq} is`, report.rows);
  return report.ok
    ? `audit chains intact: ${report.chains} chains, ${report.rows} rows\n`
    : `audit chain ${report.chain} broken at seq ${report.seq}: ${report.reason} (${report.rows} rows before it verified)\n`;
}

import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { ConfigError } from "./config.js";
import { verifyAuditChain } from "./domain/audit-verify.js";
import type { ChainReport } from "./domain/audit-verify.js";
import type { ChainKeys } from "./domain/audit-chain.js";
import { loadCipher } from "./ops/common.js";

/** Exit code of `audit verify` when the chain is broken. */
export const EXIT_CHAIN_BROKEN = 1;

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
  const file = join(dataDir, "vault.db");
  if (!existsSync(file)) throw new ConfigError(`no database at ${file}`);
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new ConfigError(`${file} cannot be opened: ${(err as Error).message}`);
  }
  try {
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").get();
    if (table === undefined) throw new ConfigError(`${file} has no audit log (start ephemeral-vault once to migrate it)`);
    return verifyAuditChain(db, keys());
  } finally {
    db.close();
  }
}

/**
 * `ephemeral-vault audit verify --data-dir DIR`: walks the audit hash chain
 * (issue 3) and reports the first broken row. The data dir defaults to
 * VAULT_DATA_DIR, then ./.vault.
 * @returns 0 when the chain is intact, EXIT_CHAIN_BROKEN (1) when it is not.
 * @throws ConfigError for usage errors and a missing database (exit 2).
 */
export async function auditCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  output: CommandOutput = processOutput,
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== "verify") throw new ConfigError('audit needs "verify"; see ephemeral-vault --help');
  let values: { "data-dir"?: string | undefined; "database-url"?: string | undefined };
  try {
    ({ values } = parseArgs({ args: rest, options: { "data-dir": { type: "string" }, "database-url": { type: "string" } }, strict: true }));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const databaseUrl = values["database-url"] ?? (values["data-dir"] === undefined ? env.VAULT_DATABASE_URL : undefined);
  if (databaseUrl !== undefined && databaseUrl !== "") return verifyPostgres(databaseUrl, env, output);
  const dataDir = values["data-dir"] ?? (env.VAULT_DATA_DIR || "./.vault");
  if (dataDir === ":memory:") throw new ConfigError("--data-dir must name a directory, not :memory:");
  // The chain is keyed with the root key (decisions: never stored in the database): load it as the server does.
  const report = verifyDataDir(dataDir, () => loadCipher(dataDir, {}, env).auditChainKeys());
  if (report.ok) {
    output.out(`audit chain intact: ${report.rows} rows, head ${report.head}\n`);
    return 0;
  }
  output.out(
    `audit chain broken at row ${report.brokenId}: ${report.reason} (${report.rows} rows before it verified)\n`,
  );
  return EXIT_CHAIN_BROKEN;
}

/**
 * `audit verify --database-url URL` (or VAULT_DATABASE_URL): every chain of
 * a PostgreSQL audit log (store/pg/audit-verify.ts), keyed with the root
 * keys of VAULT_ENCRYPTION_KEY and VAULT_PREVIOUS_ENCRYPTION_KEYS.
 * @returns 0 intact, EXIT_CHAIN_BROKEN when a chain is broken.
 * @throws ConfigError when the database cannot be reached or no key is given.
 */
async function verifyPostgres(url: string, env: Record<string, string | undefined>, output: CommandOutput): Promise<number> {
  const { openPgPool, redactUrl } = await import("./store/pg/index.js");
  const { verifyPgAuditChains } = await import("./store/pg/audit-verify.js");
  // The keys are read as the server reads them (no data dir on PostgreSQL).
  const { VAULT_DATABASE_URL: _url, ...keyEnv } = env;
  const keys = loadCipher(":memory:", {}, keyEnv).auditChainKeys();
  let pool: Awaited<ReturnType<typeof openPgPool>>;
  try {
    pool = await openPgPool({ url, poolSize: 1 });
  } catch (err) {
    throw new ConfigError(`--database-url ${redactUrl(url)}: ${(err as Error).message}`);
  }
  try {
    const report = await verifyPgAuditChains(pool, keys);
    if (report.ok) {
      output.out(`audit chains intact: ${report.chains} chains, ${report.rows} rows\n`);
      return 0;
    }
    output.out(`audit chain ${report.chain} broken at seq ${report.seq}: ${report.reason} (${report.rows} rows before it verified)\n`);
    return EXIT_CHAIN_BROKEN;
  } finally {
    await pool.end();
  }
}

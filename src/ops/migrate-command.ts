import { parseArgs } from "node:util";
import { ConfigError } from "../config.js";
import { redactUrl } from "../store/pg/redact.js";
import { migrateFromSqlite } from "./migrate-to-pg.js";

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to URL` (ops/migrate-to-pg.ts).
 * Prints one line per table and a summary; never prints the URL's password.
 * @returns 0 when every table's count matches.
 * @throws ConfigError for usage errors and refused copies (exit 2).
 */
export async function migrateCommand(args: string[], out: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<number> {
  let values: { "from-sqlite"?: string | undefined; to?: string | undefined };
  try {
    ({ values } = parseArgs({ args, options: { "from-sqlite": { type: "string" }, to: { type: "string" } }, strict: true }));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const dataDir = values["from-sqlite"];
  const url = values.to;
  if (dataDir === undefined || url === undefined) throw new ConfigError("migrate needs --from-sqlite DIR and --to postgres://...");
  const counts = await migrateFromSqlite({ dataDir, url, progress: out });
  const total = Object.values(counts).reduce((n, c) => n + c.postgres, 0);
  out(`copied ${total} rows from ${dataDir} to ${redactUrl(url)}; every table's count matches`);
  return 0;
}

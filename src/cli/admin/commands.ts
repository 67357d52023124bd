import type { Command } from "commander";
import { declareBackup, runBackup } from "./backup.js";
import type { BackupFlags } from "./backup.js";
import { declareMigrate, runMigrate } from "./migrate.js";
import type { MigrateFlags } from "./migrate.js";
import { declareRekey, runRekey } from "./rekey.js";
import type { RekeyFlags } from "./rekey.js";
import { declareRestore, runRestore } from "./restore.js";
import type { RestoreFlags } from "./restore.js";
import { declareAuditCheck, runAuditCheck } from "./audit.js";
import type { AuditCheckFlags } from "./audit.js";
import { registerAuditLs } from "../client/keys.js";
import type { ExitCode } from "../exit-codes.js";

// The operator commands on the program (cli/program.ts): each declared, with
// its flags and help, in its own module (cli/admin/backup.ts, restore-,
// rekey-, migrate.ts, audit.ts) that runs the work in ops/,
// and parsed by commander like every other command.

/**
 * `ephemeral-vault audit verify|head [--data-dir DIR | --database-url URL]`
 * (the database read directly, audit.ts) and `audit ls` (the API,
 * cli/client/keys.ts).
 */
export function registerAudit(program: Command, exit: ExitCode): void {
  const help = `
Subcommands:
  ls [--action A] [--key K] [--since T] [--until T] [--limit N] [--org ORG] [--json]
                                  the log through the API (an admin token; --org: the org's log)
  verify [--data-dir DIR]         DIR defaults to VAULT_DATA_DIR, then ./.vault
  verify --database-url URL       every writer's chain on PostgreSQL (default: VAULT_DATABASE_URL)
  verify --anchor LINE            also fail when the log is shorter than, or diverges from, LINE
  head                            verify, then print one signed anchor line (store it elsewhere)

Examples:
  ephemeral-vault audit ls --action secret.read --limit 20
  ephemeral-vault audit verify
  ephemeral-vault audit verify --data-dir /var/lib/ephemeral-vault
  ephemeral-vault audit head >> /offsite/vault-anchors.txt
  ephemeral-vault audit verify --anchor "$(tail -n 1 /offsite/vault-anchors.txt)"
  VAULT_ENCRYPTION_KEY=$KEY ephemeral-vault audit verify --database-url postgres://vault@db/vault

Exit codes: 0 chain intact, 1 chain broken (the first broken row is named) or the anchor not held,
2 usage error, no database, or an anchor line that is malformed or not authentic,
3 not verified: rows are keyed with a root key that is not loaded (its id and the setting that loads it,
VAULT_PREVIOUS_ENCRYPTION_KEYS or VAULT_ENCRYPTION_KEY, are named).`;
  const audit = program
    .command("audit")
    .description("read the audit log through the API (ls), or check its hash chains in a data directory or PostgreSQL database (verify, head)")
    .addHelpText("after", help);
  for (const sub of ["verify", "head"] as const) {
    declareAuditCheck(audit.command(sub), sub).action(async (flags: AuditCheckFlags) => {
      exit.code = await runAuditCheck(sub, flags);
    });
  }
  registerAuditLs(audit, exit);
}

/** `ephemeral-vault backup FILE [--data-dir DIR] [--force] [--encryption-key KEY]` (backup.ts). */
export function registerBackup(program: Command, exit: ExitCode): void {
  declareBackup(program.command("backup")).action(async (file: string, flags: BackupFlags) => {
    exit.code = await runBackup(file, flags);
  });
}

/** `ephemeral-vault restore FILE [--data-dir DIR] [--unauthenticated] ...` (restore.ts). */
export function registerRestore(program: Command, exit: ExitCode): void {
  declareRestore(program.command("restore")).action(async (file: string, flags: RestoreFlags) => {
    exit.code = await runRestore(file, flags);
  });
}

/** `ephemeral-vault rekey [--data-dir DIR] ...` (rekey.ts). */
export function registerRekey(program: Command, exit: ExitCode): void {
  declareRekey(program.command("rekey")).action(async (flags: RekeyFlags) => {
    exit.code = await runRekey(flags);
  });
}

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to postgres://...`: copies a
 * stopped SQLite vault into an empty PostgreSQL database (migrate.ts).
 */
export function registerMigrate(program: Command, exit: ExitCode): void {
  declareMigrate(program.command("migrate")).action(async (flags: MigrateFlags) => {
    exit.code = await runMigrate(flags);
  });
}

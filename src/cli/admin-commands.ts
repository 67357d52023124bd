import type { Command } from "commander";
import { registerAuditLs } from "./keys-commands.js";
import type { ExitCode } from "./exit-code.js";

/**
 * Registers a command whose words are handed, untouched, to an existing
 * handler (its own parser keeps its exact behaviour); commander adds `--help`
 * with examples.
 */
function registerPassThrough(
  program: Command,
  exit: ExitCode,
  spec: { name: string; description: string; help: string; run: (args: string[]) => Promise<number> | number },
): void {
  const command = program
    .command(spec.name)
    .description(spec.description)
    .argument("[args...]")
    .allowUnknownOption()
    .allowExcessArguments()
    .passThroughOptions()
    .helpOption("-h, --help", "show this help")
    .addHelpText("after", spec.help)
    .action(async (args: string[]) => {
      if (args.includes("--help") || args.includes("-h")) command.help();
      exit.code = await spec.run(args);
    });
}

/** `ephemeral-vault license keygen|issue` (decisions.md section 9), via license-command.ts. */
export function registerLicense(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "license",
    description: "make an Ed25519 key pair for issuing licenses, or issue a signed license key",
    help: `
Subcommands:
  keygen [--private-key FILE] [--force]
      write the private key to FILE (mode 0600; --force overwrites) and print
      VAULT_LICENSE_PUBLIC_KEY=...; without --private-key print both to stdout
  issue --private-key FILE --subject NAME [--expires UNIX]
      print a signed license key (give it to a vault as VAULT_LICENSE_KEY)

Examples:
  ephemeral-vault license keygen --private-key license.pem
  ephemeral-vault license issue --private-key license.pem --subject "ACME Corp" --expires 1893456000

Exit codes: 0 done, 2 usage error, existing FILE or unreadable key.`,
    run: async (args) => (await import("./license-command.js")).licenseCommand(args),
  });
}

/**
 * `ephemeral-vault audit verify|head [--data-dir DIR]` (audit-cli.ts, the
 * database read directly) and `audit ls` (the API, keys-commands.ts).
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
  for (const name of ["verify", "head"] as const) {
    audit
      .command(name)
      .description(name === "verify" ? "check the hash chains (read-only)" : "verify, then print one signed anchor line")
      .argument("[args...]")
      .allowUnknownOption()
      .allowExcessArguments()
      .passThroughOptions()
      .helpOption(false)
      .action(async (args: string[]) => {
        if (args.includes("--help") || args.includes("-h")) audit.help();
        exit.code = await (await import("./audit-commands.js")).auditCommand([name, ...args]);
      });
  }
  registerAuditLs(audit, exit);
}

/** `ephemeral-vault backup FILE [--data-dir DIR] [--force]`, via ops/backup.ts. */
export function registerBackup(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "backup",
    description: "write an online, consistent copy of the database (mode 0600), checked, with its row counts",
    help: `
Arguments:
  FILE                the copy to write; never replaced unless --force. Its MAC goes to FILE.mac:
                      keep the two together (restore refuses a backup without its MAC)
  --data-dir DIR      DIR defaults to VAULT_DATA_DIR, then ./.vault
  --force             replace an existing FILE
  --encryption-key K  the root key that MACs the backup: VAULT_ENCRYPTION_KEY, else the data dir's encryption.key

Examples:
  ephemeral-vault backup /backups/vault-$(date -u +%Y%m%dT%H%M%SZ).db --data-dir /var/lib/vault

Exit codes: 0 written and intact, 1 failed (no FILE left), 2 usage error.`,
    run: async (args) => (await import("../ops/backup.js")).backupCommand(args),
  });
}

/** `ephemeral-vault restore FILE [--data-dir DIR]`, via ops/restore.ts. */
export function registerRestore(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "restore",
    description: "replace the database with a checked backup (the vault stopped); the old one is kept beside it",
    help: `
Arguments:
  FILE                a backup written by \`ephemeral-vault backup\`, with its MAC in FILE.mac
  --data-dir DIR      DIR defaults to VAULT_DATA_DIR, then ./.vault
  --unauthenticated   accept a backup without FILE.mac (made by an older ephemeral-vault);
                      a FILE.mac that does not match is always refused
The configured encryption key (VAULT_ENCRYPTION_KEY or the data dir's encryption.key,
plus VAULT_PREVIOUS_ENCRYPTION_KEYS) must verify the MAC and open the backup. Schema
objects the vault does not define and a broken audit chain are refused.

Examples:
  VAULT_ENCRYPTION_KEY=$KEY ephemeral-vault restore /backups/vault-20261123T221530Z.db --data-dir /var/lib/vault

Exit codes: 0 restored, 1 refused (MAC, integrity, schema, audit chain, key; nothing replaced), 2 usage or a vault running there.`,
    run: async (args) => (await import("../ops/restore.js")).restoreCommand(args),
  });
}

/** `ephemeral-vault rekey [--data-dir DIR]`, via ops/rekey.ts. */
export function registerRekey(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "rekey",
    description: "re-encrypt every stored value under VAULT_ENCRYPTION_KEY (offline: the vault stopped)",
    help: `
Give the new root key in VAULT_ENCRYPTION_KEY and the old ones in VAULT_PREVIOUS_ENCRYPTION_KEYS.
Afterwards the old keys can be dropped.

Examples:
  VAULT_ENCRYPTION_KEY=$NEW VAULT_PREVIOUS_ENCRYPTION_KEYS=$OLD ephemeral-vault rekey --data-dir /var/lib/vault

Exit codes: 0 nothing left under an old key, 1 some records remain or failed, 2 usage or a vault running there.`,
    run: async (args) => (await import("../ops/rekey.js")).rekeyCommand(args),
  });
}

/**
 * `ephemeral-vault migrate --from-sqlite DIR --to postgres://...`: copies a
 * stopped SQLite vault into an empty PostgreSQL database (ops/migrate-to-pg.ts).
 */
export function registerMigrate(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "migrate",
    description: "copy a stopped SQLite vault into an empty PostgreSQL database, then compare row counts",
    help: `
Arguments:
  --from-sqlite DIR   the data directory of the SQLite vault (stopped)
  --to URL            postgres://user:password@host:5432/database (empty; the schema is created)
Everything is copied in one transaction: ciphertexts as they are (keep the same
VAULT_ENCRYPTION_KEY), the audit log as the chain "sqlite" with its hashes, ids kept.

Examples:
  ephemeral-vault migrate --from-sqlite /var/lib/vault --to postgres://vault:secret@db:5432/vault

Exit codes: 0 copied and counts equal, 2 usage, unreachable database, non-empty target or a count mismatch (nothing kept).`,
    run: async (args) => (await import("../ops/migrate-command.js")).migrateCommand(args),
  });
}

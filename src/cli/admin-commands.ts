import type { Command } from "commander";
import type { ExitCode } from "./registry.js";

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

/** `ephemeral-vault audit verify [--data-dir DIR]`, via audit-cli.ts. */
export function registerAudit(program: Command, exit: ExitCode): void {
  registerPassThrough(program, exit, {
    name: "audit",
    description: "check the audit log's hash chain of a data directory (read-only)",
    help: `
Subcommands:
  verify [--data-dir DIR]   DIR defaults to VAULT_DATA_DIR, then ./.vault

Examples:
  ephemeral-vault audit verify
  ephemeral-vault audit verify --data-dir /var/lib/ephemeral-vault

Exit codes: 0 chain intact, 1 chain broken (the first broken row is named), 2 usage error or no database.`,
    run: async (args) => (await import("../audit-cli.js")).auditCommand(args),
  });
}

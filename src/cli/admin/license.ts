import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Command } from "commander";
import { ConfigError } from "../../config.js";
import { generateLicenseKeyPair, issueLicense } from "../../crypto/license.js";
import { EXIT_OK } from "../exit-codes.js";
import type { ExitCode } from "../exit-codes.js";

/** The flags of `license keygen` and `license issue` (commander's names). */
export interface LicenseFlags {
  privateKey?: string | undefined;
  force?: boolean | undefined;
  subject?: string | undefined;
  expires?: string | undefined;
}

const HELP = `
Subcommands:
  keygen [--private-key FILE] [--force]
      write the private key to FILE (mode 0600; --force overwrites) and print
      VAULT_LICENSE_PUBLIC_KEY=...; without --private-key print both to stdout
  issue --private-key FILE --subject NAME [--expires UNIX]
      print a signed license key (give it to a vault as VAULT_LICENSE_KEY)

Examples:
  ephemeral-vault license keygen --private-key license.pem
  ephemeral-vault license issue --private-key license.pem --subject "ACME Corp" --expires 1893456000

Exit codes: 0 done, 2 usage error, existing FILE or unreadable key.`;

/** `ephemeral-vault license keygen|issue` (docs/configuration.md "Free tier and license"): the group and its two commands. */
export function registerLicense(program: Command, exit: ExitCode): void {
  const license = program
    .command("license")
    .description("make an Ed25519 key pair for issuing licenses, or issue a signed license key")
    .addHelpText("after", HELP);
  license
    .command("keygen")
    .description("write a new issuer key pair: the private key to FILE (mode 0600), the public key to stdout")
    .option("--private-key <FILE>", "where to write the private key; without it both keys are printed")
    .option("--force", "overwrite an existing FILE")
    .addHelpText("after", "\nExamples:\n  ephemeral-vault license keygen --private-key license.pem")
    .action((flags: LicenseFlags) => {
      exit.code = licenseKeygen(flags);
    });
  license
    .command("issue")
    .description("print a signed license key (give it to a vault as VAULT_LICENSE_KEY)")
    .option("--private-key <FILE>", "the issuer's private key (from license keygen)")
    .option("--subject <NAME>", "who the license is for")
    .option("--expires <UNIX>", "expiry, Unix seconds, in the future (default: none)")
    .addHelpText("after", '\nExamples:\n  ephemeral-vault license issue --private-key license.pem --subject "ACME Corp" --expires 1893456000')
    .action((flags: LicenseFlags) => {
      exit.code = licenseIssue(flags);
    });
}

/**
 * `license keygen [--private-key FILE] [--force]`: a new Ed25519 key pair;
 * without FILE both keys are printed (docs/configuration.md).
 * @returns 0.
 * @throws ConfigError (exit 2) for an empty FILE or an existing one without --force.
 */
export function licenseKeygen(flags: LicenseFlags): number {
  const file = flags.privateKey;
  if (file === undefined) {
    const pair = generateLicenseKeyPair();
    process.stderr.write("no --private-key FILE given: the private key is printed below; keep it secret\n");
    process.stdout.write(`VAULT_LICENSE_PUBLIC_KEY=${pair.publicKeyBase64}\n${pair.privateKeyPem.trimEnd()}\n`);
    return EXIT_OK;
  }
  if (file === "") throw new ConfigError("--private-key FILE is required");
  if (existsSync(file) && flags.force !== true) throw new ConfigError(`${file} exists; pass --force to overwrite it`);
  const pair = generateLicenseKeyPair();
  writeFileSync(file, pair.privateKeyPem, { mode: 0o600 });
  // the mode above applies only to a new file; --force over an existing one must not keep a looser mode
  chmodSync(file, 0o600);
  process.stderr.write(`private key written to ${file} (mode 0600); keep it secret\n`);
  process.stdout.write(`VAULT_LICENSE_PUBLIC_KEY=${pair.publicKeyBase64}\n`);
  return EXIT_OK;
}

/**
 * `license issue --private-key FILE --subject NAME [--expires UNIX]`: prints a
 * signed license key (docs/configuration.md).
 * @returns 0.
 * @throws ConfigError (exit 2) for a missing flag, an --expires that is not a
 *   future Unix time in seconds, an unreadable or invalid private key.
 */
export function licenseIssue(flags: LicenseFlags): number {
  const file = flags.privateKey;
  if (file === undefined || file === "") throw new ConfigError("--private-key FILE is required");
  const subject = flags.subject;
  if (subject === undefined || subject.trim() === "") throw new ConfigError("--subject NAME is required");
  const expires = flags.expires === undefined ? null : futureSeconds(flags.expires);
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch {
    throw new ConfigError(`cannot read ${file}`);
  }
  let token: string;
  try {
    token = issueLicense(pem, subject.trim(), expires, Date.now());
  } catch (err) {
    throw new ConfigError(`${file}: ${(err as Error).message}`);
  }
  process.stdout.write(`${token}\n`);
  return EXIT_OK;
}

/** --expires as Unix seconds, later than now. @throws ConfigError otherwise. */
function futureSeconds(text: string): number {
  if (!/^\d{1,12}$/.test(text)) throw new ConfigError("--expires must be a Unix timestamp in seconds");
  const expires = Number(text);
  // A license whose expiry has passed lifts nothing: refuse to issue it (docs/configuration.md).
  const now = Math.floor(Date.now() / 1000);
  if (expires <= now) {
    throw new ConfigError(
      `--expires ${text} is not in the future (now is ${now}, ${new Date(now * 1000).toISOString()}): the license would be expired already; give a later Unix time in seconds`,
    );
  }
  return expires;
}

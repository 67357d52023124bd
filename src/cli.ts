import { parseArgs } from "node:util";
import { chmodSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { ConfigError, flagName, loadConfig, parseServeFlags, SETTINGS } from "./config.js";
import { generateLicenseKeyPair, issueLicense } from "./license.js";
import { version } from "./version.js";
// The server, the logger and the audit command (hono, better-sqlite3, pino)
// are imported only once the settings are known to be good: a bad setting
// stops the command within a second (decisions.md section 10).

const USAGE = `ephemeral-vault ${version}: a secrets vault, one process and one SQLite file.

Usage:
  ephemeral-vault [serve] [flags]        start the vault (default command)
  ephemeral-vault audit verify [--data-dir DIR]
                                         check the audit log's hash chain; exit 1 at the first broken row
  ephemeral-vault backup FILE [--data-dir DIR] [--force]
                                         online copy of the database (mode 0600), checked; row counts printed
  ephemeral-vault restore FILE [--data-dir DIR]
                                         replace the database with a backup (vault stopped); keeps the old one
  ephemeral-vault rekey [--data-dir DIR]  re-encrypt every value under VAULT_ENCRYPTION_KEY (vault stopped)
  ephemeral-vault license keygen [--private-key FILE]
                                         make an Ed25519 key pair for issuing licenses: the private key
                                         goes to FILE (mode 0600), or to stdout without --private-key
  ephemeral-vault license issue --private-key FILE --subject NAME [--expires UNIX]
                                         print a signed license key
  ephemeral-vault --help | --version

Serve flags (each also an environment variable; a flag wins):
${Object.values(SETTINGS)
  .map((s) => `  --${flagName(s).padEnd(26)} ${s.env.join(", ").padEnd(32)} ${s.help}`)
  .join("\n")}

Exit codes: 0 stopped cleanly, 1 runtime failure (or a broken audit chain), 2 bad setting or usage.
`;

/** Exit code for a bad setting or usage (decisions.md section 10). */
const EXIT_USAGE = 2;

/**
 * The command line: serve (default), license keygen|issue, --help, --version.
 * @returns the exit code for commands that finish; serve resolves once listening.
 */
export async function main(argv: string[]): Promise<number | undefined> {
  const [first, ...rest] = argv;
  if (first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (first === "--version" || first === "-v") {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  try {
    if (first === "license") return licenseCommand(rest);
    if (first === "audit") return (await import("./audit-cli.js")).auditCommand(rest);
    if (first === "backup") return await (await import("./ops/backup.js")).backupCommand(rest);
    if (first === "restore") return await (await import("./ops/restore.js")).restoreCommand(rest);
    if (first === "rekey") return await (await import("./ops/rekey.js")).rekeyCommand(rest);
    if (first === "serve") return await serveCommand(rest);
    if (first === undefined || first.startsWith("-")) return await serveCommand(argv);
    throw new ConfigError(`unknown command "${first}"; see ephemeral-vault --help`);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`ephemeral-vault: ${err.message}\n`);
      return EXIT_USAGE;
    }
    throw err;
  }
}

async function serveCommand(args: string[]): Promise<number | undefined> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.includes("--version") || args.includes("-v")) {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  const config = loadConfig(parseServeFlags(args), process.env);
  const [{ createLogger }, { startServer }] = await Promise.all([import("./log.js"), import("./server.js")]);
  const log = createLogger(config.logLevel);
  const server = await startServer(config, log, (line) => process.stderr.write(line + "\n"));
  process.stderr.write(`ephemeral-vault ${version} listening on ${server.url}\n`);
  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, "stopping");
    server.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return undefined;
}

function licenseCommand(args: string[]): number {
  const [sub, ...rest] = args;
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        "private-key": { type: "string" },
        subject: { type: "string" },
        expires: { type: "string" },
        force: { type: "boolean" },
      },
      strict: true,
    }));
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const privateKeyFile = values["private-key"];
  if (sub === "keygen" && privateKeyFile === undefined) {
    // decisions.md section 9: `ephemeral-vault license keygen` with no file prints the pair.
    const pair = generateLicenseKeyPair();
    process.stderr.write("no --private-key FILE given: the private key is printed below; keep it secret\n");
    process.stdout.write(`VAULT_LICENSE_PUBLIC_KEY=${pair.publicKeyBase64}\n${pair.privateKeyPem.trimEnd()}\n`);
    return 0;
  }
  if (typeof privateKeyFile !== "string" || privateKeyFile === "") throw new ConfigError("--private-key FILE is required");

  if (sub === "keygen") {
    if (existsSync(privateKeyFile) && values.force !== true) {
      throw new ConfigError(`${privateKeyFile} exists; pass --force to overwrite it`);
    }
    const pair = generateLicenseKeyPair();
    writeFileSync(privateKeyFile, pair.privateKeyPem, { mode: 0o600 });
    // the mode above applies only to a new file; --force over an existing one must not keep a looser mode
    chmodSync(privateKeyFile, 0o600);
    process.stderr.write(`private key written to ${privateKeyFile} (mode 0600); keep it secret\n`);
    process.stdout.write(`VAULT_LICENSE_PUBLIC_KEY=${pair.publicKeyBase64}\n`);
    return 0;
  }
  if (sub === "issue") {
    const subject = values.subject;
    if (typeof subject !== "string" || subject.trim() === "") throw new ConfigError("--subject NAME is required");
    let expires: number | null = null;
    if (values.expires !== undefined) {
      if (typeof values.expires !== "string" || !/^\d{1,12}$/.test(values.expires)) {
        throw new ConfigError("--expires must be a Unix timestamp in seconds");
      }
      expires = Number(values.expires);
    }
    let pem: string;
    try {
      pem = readFileSync(privateKeyFile, "utf8");
    } catch {
      throw new ConfigError(`cannot read ${privateKeyFile}`);
    }
    let token: string;
    try {
      token = issueLicense(pem, subject.trim(), expires, Date.now());
    } catch (err) {
      throw new ConfigError(`${privateKeyFile}: ${(err as Error).message}`);
    }
    process.stdout.write(`${token}\n`);
    return 0;
  }
  throw new ConfigError('license needs "keygen" or "issue"; see ephemeral-vault --help');
}

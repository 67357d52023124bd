import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError } from "../config.js";
import { generateLicenseKeyPair, issueLicense } from "../crypto/license.js";

/**
 * `ephemeral-vault license keygen [--private-key FILE] [--force]` and
 * `license issue --private-key FILE --subject NAME [--expires UNIX]`
 * (docs/contract.md §12). `args` are the words after `license`.
 * @returns 0 on success.
 * @throws ConfigError for a usage error (exit 2): missing or bad flags, an
 *   existing FILE without --force, an unreadable or invalid private key.
 */
export function licenseCommand(args: string[]): number {
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
    // docs/contract.md §12: `ephemeral-vault license keygen` with no file prints the pair.
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
      // A license whose expiry has passed lifts nothing: refuse to issue it (docs/cli.md "license").
      const now = Math.floor(Date.now() / 1000);
      if (expires <= now) {
        throw new ConfigError(
          `--expires ${values.expires} is not in the future (now is ${now}, ${new Date(now * 1000).toISOString()}): the license would be expired already; give a later Unix time in seconds`,
        );
      }
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

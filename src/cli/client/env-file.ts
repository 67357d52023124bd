import { readFileSync } from "node:fs";
import { parse } from "dotenv";
import { ConfigError } from "../../config.js";
import type { SecretRef } from "../../inject/run-core.js";

const REFERENCE = "vault://";
const ORG_REFERENCE = /^vault:\/\/org\/([^/]+)\/(.+)$/;

/**
 * Reads a dotenv file for `run --env-file` and `export --env-file`
 * (docs/cli.md, "run"), parsed by the `dotenv` package. A value
 * `vault://KEY` names the secret KEY in the connection's scope (global, or
 * the `--org` org); `vault://org/ORG_ID/KEY` names the secret KEY of the
 * organization ORG_ID; every other value passes through as it is. The names
 * are explicit names (like `--env`): they may set every name.
 * @returns name -> a secret reference or a plain value, in file order.
 * @throws ConfigError (exit 2) when the file cannot be read, a name is not a
 *   variable name, or a reference names no key.
 */
export function readEnvFile(file: string): Map<string, SecretRef | string> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`--env-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const entries = new Map<string, SecretRef | string>();
  for (const [name, value] of Object.entries(parse(text))) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ConfigError(`--env-file ${file}: "${name}" is not a variable name (letters, digits, _)`);
    entries.set(name, parseReference(value, name, file));
  }
  return entries;
}

/** A `vault://` value as a reference; any other value as itself. */
function parseReference(value: string, name: string, file: string): SecretRef | string {
  if (!value.startsWith(REFERENCE)) return value;
  const org = ORG_REFERENCE.exec(value);
  if (org !== null) return { org: org[1] as string, key: org[2] as string };
  const key = value.slice(REFERENCE.length);
  if (key === "") throw new ConfigError(`--env-file ${file}: ${name}: vault:// names no key`);
  return { key };
}

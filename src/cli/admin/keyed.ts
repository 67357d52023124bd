import type { ValueCipher } from "../../crypto/cipher.js";
import { EXIT_FAILED } from "../exit-codes.js";
import { ConfigError } from "../../config.js";
import { dataDirOf, loadCipher } from "../../ops/common.js";
import type { OpsOutput, RootKeyFlags } from "../../ops/common.js";

/**
 * What `backup FILE` and `restore FILE` share (docs/operations.md,
 * "Backups"): the data dir and root key they work with, and how a failure
 * ends them.
 */

/** The data dir of a FILE command and the root key's cipher. */
export interface KeyedSetup {
  dataDir: string;
  cipher: ValueCipher;
}

/**
 * The data dir (--data-dir, else VAULT_DATA_DIR) and the root key
 * (common.ts loadCipher) of a command on `file`.
 * @param missing the usage error when `file` is empty.
 * @throws ConfigError `missing` for an empty file; a bad or missing key (exit 2).
 */
export function keyedSetup(
  file: string,
  missing: string,
  flags: RootKeyFlags & { dataDir?: string | undefined },
  env: Record<string, string | undefined>,
): KeyedSetup {
  if (file === "") throw new ConfigError(missing);
  const dataDir = dataDirOf(flags.dataDir, env);
  return { dataDir, cipher: loadCipher(dataDir, flags, env) };
}

/**
 * The end of a failed FILE command: a ConfigError is thrown again (exit 2);
 * any other error is written to stderr as
 * `ephemeral-vault: <what>: <message><after>`.
 * @returns EXIT_FAILED (1).
 * @throws ConfigError `err` itself when it is one.
 */
export function failedWith(err: unknown, output: OpsOutput, what: string, after = ""): number {
  if (err instanceof ConfigError) throw err;
  output.err(`ephemeral-vault: ${what}: ${(err as Error).message}${after}\n`);
  return EXIT_FAILED;
}

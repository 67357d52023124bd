import type { VaultClient } from "@ephemeral-vault/client";
import type { CommandPattern } from "./command-allow.js";
import type { HttpToolOptions } from "./http-allow.js";

/** How `ephemeral-vault mcp` was started (docs/mcp.md). */
export interface McpOptions {
  /** The client of the server's scope: global secrets, or the `--org` org's. */
  client: VaultClient;
  /** The same address and token on the global secrets (share_secret's dead drops). */
  globalClient: VaultClient;
  /** `--allow-reveal [PREFIX]`: get_secret is offered, for keys under PREFIX/ when given. */
  reveal?: { prefix?: string | undefined } | undefined;
  /** `--allow-command PATTERN ...`: the commands run_command may start (none: the tool is not offered). */
  commands: CommandPattern[];
  /** `--allow-env NAMES`: the only variables run_command may set (from `env` or `prefix`); empty: none. */
  allowEnv: ReadonlySet<string>;
  /** run_command's timeout, milliseconds. */
  timeoutMs: number;
  /** run_command's output cap per stream, bytes. */
  maxOutputBytes: number;
  /** `--allow-host ...` (with `--allow-http`, `--request-timeout`): http_request is offered; undefined: it is not. */
  http?: HttpToolOptions | undefined;
}

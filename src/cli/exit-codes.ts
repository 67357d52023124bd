/**
 * Every exit code of the command line, in one place (docs/cli.md "Exit codes
 * and errors", docs/operations.md, docs/audit.md). Each command imports its
 * codes from here. The three a client call ends with (refused, unreachable,
 * usage) are the client package's own, which describeFailure() returns; they
 * are re-exported here so that the command line has one module of codes.
 */
import { EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE } from "@ephemeral-vault/client";

export { EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE };
/** `run`: COMMAND could not be started (as a shell says); defined beside the child process it concerns. */
export { EXIT_CANNOT_START } from "../inject/run-child.js";

/** Done (and for `serve`: stopped cleanly). */
export const EXIT_OK = 0;
/** An operator command failed at run time (backup failed, restore refused, rekey left records); `serve`: a runtime failure. */
export const EXIT_FAILED = 1;
/** `audit verify`: the hash chain is broken, or the log does not hold its anchor. */
export const EXIT_CHAIN_BROKEN = 1;
/** `audit verify`: rows are keyed with a root key that is not loaded (not verified; nothing shows tampering). */
export const EXIT_KEY_MISSING = 3;

/**
 * Where a command's action leaves its exit code (one of the codes above).
 * Here, not in registry.ts: the command modules need it, and the registry
 * loads them.
 */
export interface ExitCode {
  code: number;
}

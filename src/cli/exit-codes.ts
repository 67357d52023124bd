/**
 * Every exit code of the command line, in one place (docs/cli.md "Exit codes
 * and errors", docs/operations.md, docs/audit.md). Each command imports its
 * codes from here.
 */

/** Done (and for `serve`: stopped cleanly). */
export const EXIT_OK = 0;
/** An operator command failed at run time (backup failed, restore refused, rekey left records); `serve`: a runtime failure. */
export const EXIT_FAILED = 1;
/** A client command: the API refused the request (its message on stderr). */
export const EXIT_REFUSED = 1;
/** `audit verify`: the hash chain is broken, or the log does not hold its anchor. */
export const EXIT_CHAIN_BROKEN = 1;
/** A usage error or a bad setting (unknown flag, missing argument, bad value), also a key or id the client refuses to send. */
export const EXIT_USAGE = 2;
/** A client command: the vault is not reachable, gave no answer in time, or what answered is not a vault. */
export const EXIT_UNREACHABLE = 2;
/** `audit verify`: rows are keyed with a root key that is not loaded (not verified; nothing shows tampering). */
export const EXIT_KEY_MISSING = 3;
/** `run`: COMMAND could not be started (as a shell says). */
export const EXIT_CANNOT_START = 127;

import type { Command } from "commander";
import type { ExitCode } from "./exit-codes.js";

/**
 * A command of the command line besides `serve`. The module behind `load` is
 * imported only when this command runs, so commander, the HTTP client and the
 * MCP SDK never slow down the server start. Adding a command is one entry here
 * plus its module exporting `register`.
 */
export interface CommandEntry {
  /** The word after `ephemeral-vault`. */
  name: string;
  /** Synopsis and one-line summary for the top-level `--help`. */
  usage: string;
  summary: string;
  /** Adds the command (its options, help text with examples and action) to the program. */
  load: () => Promise<{ register: (program: Command, exit: ExitCode) => void }>;
}

export type { ExitCode } from "./exit-codes.js";

/** Every command but `serve`, in the order the top-level help lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "put",
    usage: "put KEY [VALUE] [--ttl DURATION] [--reads N] [--seal]",
    summary: "store a keyed secret (VALUE omitted: read from stdin)",
    load: () => import("./client/secrets.js").then((m) => ({ register: m.registerPut })),
  },
  {
    name: "get",
    usage: "get KEY [--json]",
    summary: "print a secret's value (counts a read)",
    load: () => import("./client/secrets.js").then((m) => ({ register: m.registerGet })),
  },
  {
    name: "share",
    usage: "share [VALUE] [--ttl DURATION] [--reads N]",
    summary: "make a public dead drop (default one read) and print its url (its receipt on stderr)",
    load: () => import("./client/share.js").then((m) => ({ register: m.registerShare })),
  },
  {
    name: "login",
    usage: "login [--addr URL]",
    summary: "sign in with the vault's identity provider (a code to enter in a browser); stores a short-lived key",
    load: () => import("./client/login.js").then((m) => ({ register: m.registerLogin })),
  },
  {
    name: "logout",
    usage: "logout",
    summary: "revoke the key `login` stored and remove it",
    load: () => import("./client/login.js").then((m) => ({ register: m.registerLogout })),
  },
  {
    name: "status",
    usage: "status RECEIPT [--json]",
    summary: "tell whether a shared link was opened, from its receipt (no token needed)",
    load: () => import("./client/receipts.js").then((m) => ({ register: m.registerStatus })),
  },
  {
    name: "destroy",
    usage: "destroy RECEIPT",
    summary: "destroy a shared link now, with its receipt (no token needed)",
    load: () => import("./client/receipts.js").then((m) => ({ register: m.registerDestroy })),
  },
  {
    name: "request",
    usage: "request DESCRIPTION [--ttl DURATION] [--max-reads N] [-q] | request wait ID [--timeout D] | request ls | request rm ID",
    summary: "ask someone for a secret: prints a link to send; `request wait ID` prints the answer (the private key stays here)",
    load: () => import("./client/requests.js").then((m) => ({ register: m.registerRequest })),
  },
  {
    name: "ls",
    usage: "ls [--prefix P] [--json]",
    summary: "list secrets' metadata (never values)",
    load: () => import("./client/secrets.js").then((m) => ({ register: m.registerLs })),
  },
  {
    name: "rm",
    usage: "rm KEY",
    summary: "delete a secret",
    load: () => import("./client/secrets.js").then((m) => ({ register: m.registerRm })),
  },
  {
    name: "patch",
    usage: "patch KEY [--ttl DURATION] [--reads N]",
    summary: "set a new TTL (from now) and/or read limit",
    load: () => import("./client/secrets.js").then((m) => ({ register: m.registerPatch })),
  },
  {
    name: "run",
    usage: "run [--env NAME=KEY ...] [--prefix P] [--env-file FILE] [--mask | --no-mask] -- COMMAND [ARGS...]",
    summary: "start COMMAND with secrets added to its environment",
    load: () => import("./client/run.js").then((m) => ({ register: m.registerRun })),
  },
  {
    name: "export",
    usage: "export [--format dotenv|json|shell] [--env NAME=KEY ...] [--prefix P] [--env-file FILE] [--force]",
    summary: "write secrets as variables to stdout (not to a terminal), resolved as run does",
    load: () => import("./client/export.js").then((m) => ({ register: m.registerExport })),
  },
  {
    name: "mcp",
    usage: "mcp [--org ORG_ID] [--allow-command PATTERN ...] [--allow-host PATTERN[=PREFIX] ...] [--allow-reveal [PREFIX]]",
    summary: "serve the Model Context Protocol over stdio for AI agents",
    load: () => import("./client/mcp.js").then((m) => ({ register: m.registerMcp })),
  },
  {
    name: "keys",
    usage: "keys create --name N --permissions P,... [--prefix P] [--expires-at T] | keys ls | keys rm ID",
    summary: "scoped API keys (the token is printed once, on create)",
    load: () => import("./client/keys.js").then((m) => ({ register: m.registerKeys })),
  },
  {
    name: "orgs",
    usage: "orgs create|ls|show|rm, orgs principals|roles create|ls|rm ORG ..., orgs keys create|ls|rm ORG PRINCIPAL ...",
    summary: "organizations, their principals, roles and principal keys (the key is printed once)",
    load: () => import("./client/orgs.js").then((m) => ({ register: m.registerOrgs })),
  },
  {
    name: "webhooks",
    usage: "webhooks create --url URL --events E,... | ls | rm ID | rotate ID | deliveries ID [--org ORG]",
    summary: "webhooks and their delivery log (the signing secret is printed once)",
    load: () => import("./client/webhooks.js").then((m) => ({ register: m.registerWebhooks })),
  },
  {
    name: "audit",
    usage: "audit ls [--action A] [--key K] [--since T] [--until T] [--limit N] [--org ORG] | audit verify|head [--data-dir DIR | --database-url URL] [--anchor LINE]",
    summary: "read the audit log through the API; or check its hash chain (exit 1 at the first broken row, 3 when a key is not loaded)",
    load: () => import("./admin/commands.js").then((m) => ({ register: m.registerAudit })),
  },
  {
    name: "license",
    usage: "license keygen [--private-key FILE] | license issue --private-key FILE --subject NAME [--expires UNIX]",
    summary: "make an Ed25519 key pair for licenses (private key to FILE, mode 0600, or stdout) / print a signed license key",
    load: () => import("./admin/license.js").then((m) => ({ register: m.registerLicense })),
  },
  {
    name: "backup",
    usage: "backup FILE [--data-dir DIR] [--force] [--encryption-key KEY]",
    summary: "online copy of the database (mode 0600), checked, MACed (FILE.mac); row counts printed",
    load: () => import("./admin/commands.js").then((m) => ({ register: m.registerBackup })),
  },
  {
    name: "restore",
    usage: "restore FILE [--data-dir DIR] [--unauthenticated]",
    summary: "replace the database with a backup (vault stopped); keeps the old one",
    load: () => import("./admin/commands.js").then((m) => ({ register: m.registerRestore })),
  },
  {
    name: "rekey",
    usage: "rekey [--data-dir DIR]",
    summary: "re-encrypt every value under VAULT_ENCRYPTION_KEY (vault stopped)",
    load: () => import("./admin/commands.js").then((m) => ({ register: m.registerRekey })),
  },
  {
    name: "migrate",
    usage: "migrate --from-sqlite DIR --to postgres://...",
    summary: "copy a stopped SQLite vault into an empty PostgreSQL database; counts compared",
    load: () => import("./admin/commands.js").then((m) => ({ register: m.registerMigrate })),
  },
];

import { settingsHelp } from "../config/render.js";
import { version } from "../version.js";
import { COMMANDS } from "./registry.js";

/**
 * The top-level usage (`ephemeral-vault --help`, the same as `serve --help`):
 * every command with its synopsis, then the serve flags and their variables.
 * The serve flags come from the settings table (config/settings.ts).
 */
export function topLevelUsage(): string {
  const commands = COMMANDS.map((c) => `  ephemeral-vault ${c.usage}\n${" ".repeat(8)}${c.summary}`).join("\n");
  return `ephemeral-vault ${version}: a secrets vault, one process and one SQLite file.

Usage:
  ephemeral-vault [serve] [flags]
        start the vault (default command)
${commands}
  ephemeral-vault --help | --version | COMMAND --help

Client commands (put, get, share, status, destroy, request, ls, rm, patch, run, export, mcp, keys, orgs, webhooks, audit ls) talk
to a running vault over HTTP:
  --addr URL      VAULT_ADDR    default: the address a local vault recorded in ./.vault, else http://127.0.0.1:8484
  --token TOKEN   VAULT_TOKEN   default: ./.vault/master.key or $VAULT_DATA_DIR/master.key when readable
  --org ORG_ID    VAULT_ORG     act on that organization's secrets (a principal key as token)
  --timeout D     give up on a request after D, its retries included (default 30s; 0: never)
                  VAULT_CACERT  a PEM file of CA certificates to trust for an https:// vault, besides the system's
  DURATION is seconds or 30s, 15m, 2h, 7d.

Serve flags (each also an environment variable; a flag wins):
${settingsHelp()}
  --print-url-json             once listening, print {"url","token"} as one line on stdout (the log goes to stderr)

Examples:
  ephemeral-vault --data-dir ./.vault --port 8484
  ephemeral-vault serve --data-dir :memory: --port 0 --print-url-json
  printf %s "$DB_PASSWORD" | ephemeral-vault put prod/db_password --ttl 7d
  ephemeral-vault run --prefix prod -- node server.js

Exit codes: serve 0 stopped cleanly, 1 runtime failure, 2 bad setting or usage. Client commands 0 ok,
1 the API refused (its message on stderr), 2 usage error, vault not reachable (or no answer in time)
or not a vault. audit verify 1 on a broken chain, 3 when a root key it needs is not loaded.
`;
}

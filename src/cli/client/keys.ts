import type { Command } from "commander";
import type { BodyOf } from "@ephemeral-vault/client";
import { callVault } from "./call.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { formatRows, parseLimit, parseList, parseTime, printJson } from "../output.js";
import { showAllPages, showDeleted, showRecord } from "../print.js";
import type { Column } from "../output.js";
import type { ExitCode } from "../exit-codes.js";

/** Exit codes of the administration commands (docs/cli.md "Exit codes and errors"). */
const ADMIN_EXIT_HELP = `
Exit codes: 0 ok, 1 the API refused (its error on stderr), 2 usage error, vault not reachable or not a vault.`;

/**
 * An administration command group (`keys`, `orgs`, `webhooks`; docs/cli.md):
 * its help ends with `examples`, one command line each, then the exit codes.
 * @returns the group, for its subcommands.
 */
export function adminGroup(program: Command, name: string, description: string, examples: readonly string[]): Command {
  const help = `\nExamples:\n${examples.map((line) => `  ${line}\n`).join("")}${ADMIN_EXIT_HELP}`;
  return program.command(name).description(description).addHelpText("after", help);
}

interface JsonFlags extends ConnectionFlags {
  json?: boolean;
  quiet?: boolean;
}

const KEY_COLUMNS: Column[] = [
  ["ID", "id"],
  ["NAME", "name"],
  ["PERMISSIONS", "permissions"],
  ["PREFIX", "prefix"],
  ["EXPIRES", "expires_at"],
  ["LAST USED", "last_used_at"],
];

/** Adds a subcommand with the connection options (no --org: scoped keys are global) and --json. */
function sub(parent: Command, name: string, description: string, org = false): Command {
  return withConnectionOptions(parent.command(name).description(description), { org }).option("--json", "print the API's answer as JSON");
}

/**
 * `ephemeral-vault keys create|ls|rm`: scoped API keys (docs/keys.md) through
 * the typed client; tables by default, `--json` for programs; the token is
 * printed once, on create (`-q` prints only it).
 */
export function registerKeys(program: Command, exit: ExitCode): void {
  const keys = adminGroup(program, "keys", "scoped API keys: create, list, revoke (an admin token: the master key or an admin key)", [
    "ephemeral-vault keys create --name ci --permissions read --prefix ci/ --expires-at 2027-01-01",
    'VAULT_TOKEN="$(ephemeral-vault keys create --name agent --permissions read,write,delete --prefix agent/ -q)"',
    "ephemeral-vault keys ls",
    "ephemeral-vault keys rm sk_...",
  ]);

  sub(keys, "create", "make a scoped key; its token is printed once")
    .requiredOption("--name <name>", "a label, 1-128 characters")
    .requiredOption("--permissions <list>", "comma-separated: read, write, delete, admin")
    .option("--prefix <prefix>", "confine the key to secret keys starting with PREFIX (e.g. ci/)")
    .option("--expires-at <time>", "Unix seconds or an ISO date; omitted: never")
    .option("-q, --quiet", "print only the token")
    .action(async (flags: JsonFlags & { name: string; permissions: string; prefix?: string; expiresAt?: string }) => {
      const body = {
        name: flags.name,
        permissions: parseList(flags.permissions, "--permissions"),
        ...(flags.prefix === undefined ? {} : { prefix: flags.prefix }),
        ...(flags.expiresAt === undefined ? {} : { expires_at: parseTime(flags.expiresAt, "--expires-at") }),
      } as BodyOf<"/keys", "post">;
      await callVault(flags, exit, async (client) => {
        showRecord(flags, await client.keys.create(body), ["id", "name", "permissions", "prefix", "expires_at", "created_at"], "token");
      });
    });

  sub(keys, "ls", "list the keys (never their tokens)").action(async (flags: JsonFlags) => {
    await callVault(flags, exit, async (client) => showAllPages(flags, (cursor) => client.keys.list({ cursor }), "keys", KEY_COLUMNS, "no keys"));
  });

  sub(keys, "rm", "revoke a key at once")
    .argument("<id>", "the key's id (sk_...)")
    .action(async (id: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showDeleted(flags, await client.keys.delete(id)));
    });
}

const AUDIT_COLUMNS: Column[] = [
  ["TIME", "timestamp"],
  ["ACTION", "action"],
  ["KEY", "key"],
  ["ACTOR", "actor"],
  ["IP", "ip"],
];

/**
 * `ephemeral-vault audit ls`: one page of the audit log (docs/audit.md),
 * global, or the org's with `--org` (a principal key whose role has `a`, or
 * the master key); newest first. The next page's cursor goes to stderr.
 */
export function registerAuditLs(audit: Command, exit: ExitCode): void {
  sub(audit, "ls", "list audit entries, newest first (one page; --cursor for the next)", true)
    .option("--action <action>", "only this action, e.g. secret.read")
    .option("--key <key>", "only entries for this secret key")
    .option("--since <time>", "from this time (Unix seconds or an ISO date)")
    .option("--until <time>", "up to this time (Unix seconds or an ISO date)")
    .option("--limit <n>", "at most N entries (1-1000)")
    .option("--cursor <cursor>", "the next page, as printed after the last one")
    .addHelpText(
      "after",
      `
Examples:
  ephemeral-vault audit ls --limit 20
  ephemeral-vault audit ls --action secret.read --key prod/db_password --since 2026-11-01
  ephemeral-vault audit ls --org org_... --json
${ADMIN_EXIT_HELP}`,
    )
    .action(async (flags: JsonFlags & { action?: string; key?: string; since?: string; until?: string; limit?: string; cursor?: string }) => {
      const query = {
        action: flags.action,
        key: flags.key,
        since: flags.since === undefined ? undefined : parseTime(flags.since, "--since"),
        until: flags.until === undefined ? undefined : parseTime(flags.until, "--until"),
        limit: flags.limit === undefined ? undefined : parseLimit(flags.limit),
        cursor: flags.cursor,
      };
      await callVault(flags, exit, async (client, connection) => {
        const page = connection.org === undefined ? await client.audit.list(query) : await client.orgs.of(connection.org).audit(query);
        if (flags.json === true) {
          printJson(page);
          return;
        }
        const entries = page.entries as unknown as Array<Record<string, unknown>>;
        const columns = connection.org === undefined ? AUDIT_COLUMNS : AUDIT_COLUMNS.map((c): Column => (c[1] === "actor" ? ["PRINCIPAL", "principal_id"] : c));
        process.stdout.write(formatRows(entries, columns, "no entries"));
        if (typeof page.next_cursor === "string") process.stderr.write(`more: --cursor ${page.next_cursor}\n`);
      });
    });
}

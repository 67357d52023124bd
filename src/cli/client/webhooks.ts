import type { Command } from "commander";
import type { BodyOf, VaultClient, WebhooksApi } from "@ephemeral-vault/client";
import { callVault } from "./call.js";
import type { Connection, ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { adminGroup } from "./keys.js";
import { formatRows, parseLimit, parseList, printJson } from "../output.js";
import { showAllPages, showDeleted, showRecord } from "../print.js";
import type { Column } from "../output.js";
import type { ExitCode } from "../exit-codes.js";

interface JsonFlags extends ConnectionFlags {
  json?: boolean;
  quiet?: boolean;
}

const WEBHOOK_COLUMNS: Column[] = [
  ["ID", "id"],
  ["URL", "url"],
  ["EVENTS", "events"],
  ["DESCRIPTION", "description"],
  ["CREATED", "created_at"],
];

const DELIVERY_COLUMNS: Column[] = [
  ["AT", "at"],
  ["EVENT", "event_id"],
  ["TYPE", "type"],
  ["ATTEMPT", "attempt"],
  ["STATUS", "status"],
  ["HTTP", "http_status"],
  ["ERROR", "error"],
];

/** The global webhooks, or with --org (VAULT_ORG) that org's. */
function webhooksOf(client: VaultClient, connection: Connection): WebhooksApi {
  return connection.org === undefined ? client.webhooks : client.orgs.of(connection.org).webhooks;
}

function sub(parent: Command, name: string, description: string): Command {
  return withConnectionOptions(parent.command(name).description(description)).option("--json", "print the API's answer as JSON");
}

/**
 * `ephemeral-vault webhooks create|ls|rm|rotate|deliveries` (docs/webhooks.md):
 * global webhooks (an admin token), or an org's with `--org` (a principal
 * key whose role has `M`, or the master key). The signing secret is printed
 * once, on create and rotate.
 */
export function registerWebhooks(program: Command, exit: ExitCode): void {
  const webhooks = adminGroup(program, "webhooks", "webhooks: create, list, delete, rotate the signing secret, show deliveries (--org: an org's)", [
    "ephemeral-vault webhooks create --url https://hooks.example.com/vault --events secret.read,secret.burned",
    "ephemeral-vault webhooks create --url https://hooks.example.com/acme --events '*' --org org_...",
    "ephemeral-vault webhooks ls",
    "ephemeral-vault webhooks deliveries wh_...",
    "ephemeral-vault webhooks rotate wh_...",
    "ephemeral-vault webhooks rm wh_...",
  ]);

  sub(webhooks, "create", "subscribe an https URL to events; its signing secret is printed once")
    .requiredOption("--url <url>", "https://... that receives the events")
    .requiredOption("--events <list>", "comma-separated event types, or * for all (docs/webhooks.md)")
    .option("--description <text>", "a note for people")
    .option("-q, --quiet", "print only the id")
    .action(async (flags: JsonFlags & { url: string; events: string; description?: string }) => {
      const body = {
        url: flags.url,
        events: parseList(flags.events, "--events"),
        ...(flags.description === undefined ? {} : { description: flags.description }),
      } as BodyOf<"/webhooks", "post">;
      await callVault(flags, exit, async (client, connection) => {
        const hook = await webhooksOf(client, connection).create(body);
        showRecord(flags, hook, ["id", "url", "events", "description", "org_id", "created_at"], "secret", "id");
      });
    });

  sub(webhooks, "ls", "list the webhooks (never their secrets)").action(async (flags: JsonFlags) => {
    await callVault(flags, exit, async (client, connection) => {
      const api = webhooksOf(client, connection);
      await showAllPages(flags, (cursor) => api.list({ cursor }), "webhooks", WEBHOOK_COLUMNS, "no webhooks");
    });
  });

  sub(webhooks, "rm", "delete a webhook: no more deliveries to it")
    .argument("<id>", "the webhook's id (wh_...)")
    .action(async (id: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client, connection) => showDeleted(flags, await webhooksOf(client, connection).delete(id)));
    });

  sub(webhooks, "rotate", "a new signing secret, printed once (the previous one stays valid for 24 hours)")
    .argument("<id>", "the webhook's id (wh_...)")
    .action(async (id: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client, connection) => {
        showRecord(flags, await webhooksOf(client, connection).rotate(id), ["id", "url"], "secret");
      });
    });

  sub(webhooks, "deliveries", "the delivery attempts of the last 7 days, newest first (one page)")
    .argument("<id>", "the webhook's id (wh_...)")
    .option("--limit <n>", "at most N attempts (1-1000)")
    .option("--cursor <cursor>", "the next page, as printed after the last one")
    .action(async (id: string, flags: JsonFlags & { limit?: string; cursor?: string }) => {
      const page = { limit: flags.limit === undefined ? undefined : parseLimit(flags.limit), cursor: flags.cursor };
      await callVault(flags, exit, async (client, connection) => {
        const answer = await webhooksOf(client, connection).deliveries(id, page);
        if (flags.json === true) {
          printJson(answer);
          return;
        }
        process.stdout.write(formatRows(answer.deliveries as unknown as Array<Record<string, unknown>>, DELIVERY_COLUMNS, "no deliveries"));
        if (typeof answer.next_cursor === "string") process.stderr.write(`more: --cursor ${answer.next_cursor}\n`);
      });
    });
}

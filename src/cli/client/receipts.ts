import type { Command } from "commander";
import { describeFailure, parseReceipt, VaultApiError, VaultClient } from "@ephemeral-vault/client";
import type { Receipt } from "@ephemeral-vault/client";
import { ConfigError } from "../../config.js";
import { EXIT_REFUSED } from "../exit-codes.js";
import type { ExitCode } from "../exit-codes.js";
import { printJson } from "../output.js";
import { resolveAddress, timeoutOf } from "./connection.js";
import { cliFetch } from "./ca-fetch.js";

/** The flags of `status` and `destroy`: an address and a time limit, no token (the receipt is the capability). */
interface ReceiptFlags {
  addr?: string;
  timeout?: string;
  json?: boolean;
}

/** Unix seconds as `2026-12-02T10:15:00Z`. */
function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
}

/**
 * A receipt as one human line (docs/cli.md, "Receipts"): `waiting`,
 * `opened 1 of 3 reads, last at <time>`, `burned at <time>`, `expired at
 * <time>`, `deleted`, with `; expires <time>` while the secret lives and
 * has a TTL. Times in UTC ISO form.
 */
export function receiptLine(r: Receipt): string {
  const reads = r.maxReads === null ? `${r.readCount} read${r.readCount === 1 ? "" : "s"} (no limit)` : `${r.readCount} of ${r.maxReads} reads`;
  const expires = r.expiresAt === null ? "" : `; expires ${iso(r.expiresAt)}`;
  const last = r.lastReadAt === null ? "" : `, last at ${iso(r.lastReadAt)}`;
  switch (r.state) {
    case "waiting":
      return `waiting: not opened yet, ${reads}${expires}`;
    case "opened":
      return `opened ${reads}${last}${expires}`;
    case "burned":
      return r.lastReadAt === null ? `burned (${reads})` : `burned at ${iso(r.lastReadAt)} (${reads})`;
    case "expired":
      return r.expiresAt === null ? `expired (${reads})` : `expired at ${iso(r.expiresAt)} (${reads})`;
    case "deleted":
      return `deleted (${reads}${last})`;
  }
}

/**
 * The receipt token and a token-less client for its vault: the address is
 * `--addr`, else the receipt link's own, else VAULT_ADDR (or a local vault's, or the default).
 * @throws ConfigError (exit 2) for a text that is not a receipt, or a bad address.
 */
function receiptClient(receipt: string, flags: ReceiptFlags): { client: VaultClient; token: string } {
  const ref = parseReceipt(receipt);
  if (ref === undefined) throw new ConfigError("not a receipt: expected vrc_ and base64url characters, or a link ending in /receipts/vrc_...");
  const addr = flags.addr === undefined && ref.base !== undefined ? ref.base : resolveAddress(flags).addr;
  return { client: new VaultClient({ fetch: cliFetch(), addr, token: undefined, org: null, timeoutMs: timeoutOf(flags) }), token: ref.token };
}

/** A failed call as one line on stderr and its exit code (describeFailure); anything else is rethrown. */
function fail(err: unknown, exit: ExitCode): void {
  const failure = describeFailure(err);
  if (failure === null) throw err;
  const hint = err instanceof VaultApiError && err.status === 404 ? ": no such receipt (a receipt is kept for the secret's TTL after its end, 7 days without one)" : "";
  process.stderr.write(`ephemeral-vault: ${failure.message}${hint}\n`);
  exit.code = failure.code;
}

/** The address and time-limit options of a receipt command (no --token: none is sent). */
function withAddress(command: Command): Command {
  return command
    .option("--addr <url>", "vault address (VAULT_ADDR; a receipt link carries its own); no token is needed")
    .option("--timeout <duration>", "give up on the request after DURATION (30, 30s, 2m; 0: never); default 30s");
}

/**
 * `status RECEIPT [--json] [--addr URL]`: what a share's receipt says
 * (GET /receipts/<token>, no token sent): one human line, or the API's body
 * with `--json`. Exit 0; an unknown receipt exits like a not-found `get`
 * (1, EXIT_REFUSED), a bad receipt text 2 (docs/cli.md, "Receipts").
 */
export function registerStatus(program: Command, exit: ExitCode): void {
  withAddress(
    program
      .command("status")
      .description("tell whether a shared link was opened, from the receipt `share` printed (reads nothing)")
      .argument("<receipt>", "the receipt: vrc_... or a link ending in /receipts/vrc_...")
      .option("--json", "print the API's body: {state, created_at, expires_at, max_reads, read_count, last_read_at}"),
  )
    .addHelpText(
      "after",
      `
States: waiting (not opened yet), opened (read, reads may be left), burned,
expired, deleted. The receipt never reads the value. No token is needed.

Examples:
  ephemeral-vault status vrc_...
  ephemeral-vault status vrc_... --json --addr https://vault.example.com

Exit codes: 0 ok, 1 unknown receipt (or the API refused), 2 usage error or vault not reachable.`,
    )
    .action(async (receipt: string, flags: ReceiptFlags) => {
      const { client, token } = receiptClient(receipt, flags);
      try {
        const r = await client.receipt(token);
        if (flags.json === true) {
          printJson({ state: r.state, created_at: r.createdAt, expires_at: r.expiresAt, max_reads: r.maxReads, read_count: r.readCount, last_read_at: r.lastReadAt });
        } else {
          process.stdout.write(`${receiptLine(r)}\n`);
        }
      } catch (err) {
        fail(err, exit);
      }
    });
}

/**
 * `destroy RECEIPT [--addr URL]`: deletes a share's secret now with its
 * receipt (POST /receipts/<token>/destroy, no token sent); prints
 * `destroyed`. A secret that already ended (burned, expired, deleted): a
 * line saying so and exit 1 (EXIT_REFUSED); an unknown receipt: exit 1
 * (docs/cli.md, "Receipts").
 */
export function registerDestroy(program: Command, exit: ExitCode): void {
  withAddress(
    program
      .command("destroy")
      .description("destroy a shared link now, with the receipt `share` printed")
      .argument("<receipt>", "the receipt: vrc_... or a link ending in /receipts/vrc_..."),
  )
    .addHelpText(
      "after",
      `
The link is dead at once (its page says it is gone); the receipt then says
deleted. No token is needed.

Example:
  ephemeral-vault destroy vrc_...

Exit codes: 0 destroyed, 1 it had ended already (burned, expired, deleted) or unknown receipt, 2 usage error or vault not reachable.`,
    )
    .action(async (receipt: string, flags: ReceiptFlags) => {
      const { client, token } = receiptClient(receipt, flags);
      try {
        await client.destroyByReceipt(token);
        process.stdout.write("destroyed\n");
      } catch (err) {
        if (err instanceof VaultApiError && err.status === 409) {
          const why = err.detail ?? err.error;
          process.stderr.write(`ephemeral-vault: nothing to destroy: ${why} (409)\n`);
          exit.code = EXIT_REFUSED;
          return;
        }
        fail(err, exit);
      }
    });
}

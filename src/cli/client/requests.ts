import { existsSync } from "node:fs";
import type { Command } from "commander";
import { describeFailure, EnvelopeError, VaultApiError, VaultClient } from "@ephemeral-vault/client";
import type { SecretRequest } from "@ephemeral-vault/client";
import { ConfigError } from "../../config.js";
import { parseDuration, parseReads } from "../duration.js";
import { EXIT_REFUSED } from "../exit-codes.js";
import type { ExitCode } from "../exit-codes.js";
import { allPages } from "../output.js";
import type { Column } from "../output.js";
import { showDeleted, showList } from "../print.js";
import { callVault } from "./call.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { keyFilePath, loadRequestKey, removeRequestKey, requestId, requestsDir, saveRequestKey } from "./request-keys.js";
import { cliFetch } from "./ca-fetch.js";

/** Polls of `request wait`, by default: every 2 seconds. */
const DEFAULT_INTERVAL = "2s";

interface MakeFlags extends ConnectionFlags {
  ttl?: string;
  maxReads?: string;
  quiet?: boolean;
}

interface WaitFlags {
  addr?: string;
  timeout?: string;
  interval: string;
}

interface ListFlags extends ConnectionFlags {
  json?: boolean;
}

/** The `request ls` table; DESCRIPTION last (not padded), KEY says whether this machine holds the private key. */
const COLUMNS: Column[] = [
  ["ID", "id"],
  ["STATE", "state"],
  ["EXPIRES", "expires_at"],
  ["KEY", "key_file"],
  ["DESCRIPTION", "description"],
];

/** A description on one table line: control characters as spaces, at most 60 characters. */
function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return [...flat].length > 60 ? `${[...flat].slice(0, 59).join("")}…` : flat;
}

/**
 * `request DESCRIPTION [--ttl DURATION] [--max-reads N] [--org ORG] [-q]`,
 * `request wait ID [--timeout DURATION] [--interval DURATION] [--addr URL]`,
 * `request ls [--json]`, `request rm ID` (docs/cli.md "request",
 * docs/requests.md): asks someone for a secret. The key pair is made here;
 * the private key is kept in `<config dir>/requests/<id>.json` (mode 0600,
 * request-keys.ts) and never sent; `wait` reads and opens the answer.
 */
export function registerRequest(program: Command, exit: ExitCode): void {
  const request = withConnectionOptions(
    program
      .command("request")
      .description("ask someone for a secret: prints a link to send them; `request wait ID` reads their answer")
      .argument("[description]", "what you ask for, shown to the person asked (1 to 1000 characters)")
      .option("--ttl <duration>", "the request (then its answer) expires after DURATION; default 7d, at most 30d")
      .option("--max-reads <n>", "reads of the answer before it burns (default 1)")
      .option("-q, --quiet", "print only the request's id"),
  ).addHelpText(
    "after",
    `
The private key that opens the answer is kept in <config dir>/requests/<id>.json,
mode 0600 (VAULT_CONFIG_DIR, default ~/.config/ephemeral-vault); it never reaches
the vault. The answer is encrypted in the answerer's browser to its public key.

Examples:
  ephemeral-vault request "the billing API key" --ttl 2d
  ID="$(ephemeral-vault request "the staging DB password" -q)"
  ephemeral-vault request wait "$ID" --timeout 10m > db-password.txt
  ephemeral-vault request ls
  ephemeral-vault request rm "$ID"

Exit codes: 0 ok, 1 the API refused (its error on stderr), 2 usage error, vault not reachable,
or (wait) nobody answered within --timeout.`,
  );
  request.action(async (description: string | undefined, flags: MakeFlags) => {
    if (description === undefined) throw new ConfigError('request needs a DESCRIPTION of what you ask for, e.g. ephemeral-vault request "the billing API key"');
    const ttlSeconds = flags.ttl === undefined ? undefined : parseDuration(flags.ttl);
    const maxReads = flags.maxReads === undefined ? undefined : parseReads(flags.maxReads);
    await callVault(flags, exit, async (client, connection) => {
      const made = await client.request({ description, ttlSeconds, maxReads });
      let file: string;
      try {
        file = saveRequestKey({
          v: 1,
          id: made.id,
          url: made.url,
          addr: connection.addr,
          org: connection.org ?? null,
          private_key: made.privateKey,
          description,
          created_at: made.request.created_at,
          expires_at: made.expiresAt,
        });
      } catch (err) {
        // Without its private key nobody can read the answer: the request goes too.
        await client.requests.delete(made.id).catch(() => undefined);
        throw new ConfigError(`cannot keep the request's private key in ${requestsDir()} (${(err as NodeJS.ErrnoException).code ?? "error"}); the request was deleted`);
      }
      if (flags.quiet === true) {
        process.stdout.write(`${made.id}\n`);
        return;
      }
      process.stdout.write(`${made.url}\n`);
      process.stderr.write(
        `ephemeral-vault: send this link to the person who has the secret; read the answer with: ephemeral-vault request wait ${made.id}\n` +
          `ephemeral-vault: its private key is in ${file} (only that file opens the answer)\n`,
      );
    });
  });

  request
    .command("wait")
    .description("wait until the request is answered, then print the answer (one read; the last one burns it)")
    .argument("<id>", "the request's id")
    .option("--timeout <duration>", "give up after DURATION (30s, 10m, 2h; exit 2, nothing read); default: wait until answered or expired")
    .option("--interval <duration>", "ask the vault every DURATION", DEFAULT_INTERVAL)
    .option("--addr <url>", "the vault address (default: where the request was made, from its key file)")
    .addHelpText(
      "after",
      `
Prints the answer exactly as typed (CR LF, emoji and all; a newline is added only on a
terminal). Removes the key file once the answer's last read is spent, or when the
request is gone. Needs no token: the private key's proof is what reads the answer.`,
    )
    .action(async (idText: string, flags: WaitFlags) => waitForAnswer(requestId(idText), flags, exit));

  withConnectionOptions(request.command("ls").description("list the requests made with this token (never an answer)"))
    .option("--json", "print the API's entries as JSON")
    .action(async (flags: ListFlags) => {
      await callVault(flags, exit, async (client) => {
        const entries = await allPages<SecretRequest>((cursor) => client.requests.list(cursor === undefined ? {} : { cursor }).then((page) => ({ ...page })), "requests");
        if (flags.json === true) {
          showList(flags, entries.map((e) => ({ ...e })), COLUMNS, "no requests");
          return;
        }
        const rows = entries.map((e) => ({ ...e, description: oneLine(e.description), key_file: hasKeyFile(e.id) ? "here" : "-" }));
        showList(flags, rows, COLUMNS, "no requests");
      });
    });

  withConnectionOptions(request.command("rm").description("delete a request and its answer, and its key file"))
    .argument("<id>", "the request's id")
    .option("--json", "print the API's answer as JSON")
    .action(async (idText: string, flags: ListFlags) => {
      const id = requestId(idText);
      const org = flags.org ?? loadRequestKey(id)?.org ?? undefined;
      await callVault({ ...flags, org }, exit, async (client) => {
        try {
          showDeleted(flags, await client.requests.delete(id));
        } catch (err) {
          if (err instanceof VaultApiError && err.status === 404) removeRequestKey(id);
          throw err;
        }
        removeRequestKey(id);
      });
    });
}

/** Whether this machine holds the key file of request `id`. */
function hasKeyFile(id: string): boolean {
  try {
    return existsSync(keyFilePath(id));
  } catch {
    return false;
  }
}

/**
 * `request wait ID`: polls until the request is answered (client
 * awaitAnswer: POST /r/<id>/reveal with the private key's proof, no token),
 * reads it once and prints it byte-exact; removes the key file when that was
 * the answer's last read, or when the vault the request was made at (no
 * `--addr`) no longer knows the request (404).
 * @throws ConfigError (exit 2) for a bad duration or a missing key file.
 */
async function waitForAnswer(id: string, flags: WaitFlags, exit: ExitCode): Promise<void> {
  const entry = loadRequestKey(id);
  if (entry === undefined) {
    throw new ConfigError(`no key file for request ${id} in ${requestsDir()}: only the config directory that made the request can read its answer`);
  }
  const timeoutMs = flags.timeout === undefined || flags.timeout.trim() === "0" ? 0 : parseDuration(flags.timeout) * 1000;
  const intervalMs = parseDuration(flags.interval) * 1000;
  const addr = (flags.addr ?? entry.addr).replace(/\/+$/, "");
  const client = new VaultClient({ fetch: cliFetch(), addr, token: undefined, org: null });
  try {
    const read = await client.awaitAnswer(id, entry.private_key, { timeoutMs, intervalMs });
    process.stdout.write(process.stdout.isTTY ? `${read.value}\n` : read.value);
    if (read.spent) removeRequestKey(id);
  } catch (err) {
    if (err instanceof VaultApiError && err.status === 404) {
      // Only the vault the request was made at says it is gone: another --addr keeps the key.
      const removed = flags.addr === undefined && removeRequestKey(id);
      const file = removed ? "its key file was removed" : `its key file is kept (remove it with: ephemeral-vault request rm ${id})`;
      process.stderr.write(`ephemeral-vault: ${err.error} (404): the request is gone (expired, deleted, or its answer read to the end); ${file}\n`);
      exit.code = EXIT_REFUSED;
      return;
    }
    if (err instanceof EnvelopeError) {
      process.stderr.write(`ephemeral-vault: ${err.message}\n`);
      exit.code = EXIT_REFUSED;
      return;
    }
    const failure = describeFailure(err);
    if (failure === null) throw err;
    const again = failure.code === EXIT_REFUSED ? "" : `; run: ephemeral-vault request wait ${id}`;
    process.stderr.write(`ephemeral-vault: ${failure.message}${again}\n`);
    exit.code = failure.code;
  }
}

import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describeFailure, EnvelopeError, VaultClient, parseShareLink } from "@ephemeral-vault/client";
import { EXIT_REFUSED } from "../exit-codes.js";
import type { ShareLink } from "@ephemeral-vault/client";
import { ConfigError } from "../../config.js";
import { callVault } from "./call.js";
import type { ConnectionFlags } from "./connection.js";
import { argvWarning, timeoutOf, withConnectionOptions } from "./connection.js";
import { parseDuration, parseReads } from "../duration.js";
import { promptHidden } from "../prompt.js";
import type { ExitCode } from "../exit-codes.js";
import { readStdin } from "../stdin.js";
import { cliFetch } from "./ca-fetch.js";
import { outputOf, readShareFile } from "./files.js";

/** The passphrase flags of `share` and `get <url>`. */
export interface PassphraseFlags {
  passphraseFile?: string;
  askPassphrase?: boolean;
}

/**
 * The passphrase from `--passphrase-file FILE` (its first line), else
 * VAULT_SHARE_PASSPHRASE, else typed at the terminal when `ask` (docs/share.md, "From the command line").
 * @returns the passphrase, or undefined when none was given.
 * @throws ConfigError (exit 2) when the file cannot be read or is empty, or `ask` without a terminal.
 */
export async function passphraseOf(flags: PassphraseFlags, ask: boolean): Promise<string | undefined> {
  if (flags.passphraseFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.passphraseFile, "utf8");
    } catch (err) {
      throw new ConfigError(`--passphrase-file: cannot read ${flags.passphraseFile} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const line = text.split(/\r?\n/)[0] ?? "";
    if (line === "") throw new ConfigError(`--passphrase-file: ${flags.passphraseFile} is empty`);
    return line;
  }
  const fromEnv = process.env.VAULT_SHARE_PASSPHRASE;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  if (!ask) return undefined;
  const typed = await promptHidden("passphrase: ");
  if (typed === undefined) throw new ConfigError("a passphrase is needed: give --passphrase-file FILE or VAULT_SHARE_PASSPHRASE (no terminal to ask on)");
  if (typed === "") throw new ConfigError("an empty passphrase");
  return typed;
}

/**
 * `share [VALUE] [--ttl DURATION] [--reads N] [--passphrase-file FILE |
 * --ask-passphrase] [--plain]`: a public dead drop, encrypted here first (the
 * end-to-end envelope, docs/share.md); prints its link `.../s/<id>#<key>`
 * on stdout and its receipt on stderr (receiptNotice).
 * `--plain` stores the value itself (the API's read returns it). Global
 * only: `--org` is refused.
 */
export function registerShare(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("share")
      .description("make a one-time link to a secret, encrypted end to end (the vault never sees it); prints the link")
      .argument("[value]", "the value; omit it to read stdin to its end")
      .option("--ttl <duration>", "expire after DURATION: seconds or 30s, 15m, 2h, 7d")
      .option("--reads <n>", "burn after N reads", "1")
      .option("--passphrase-file <file>", "also protect it with the passphrase in FILE's first line (VAULT_SHARE_PASSPHRASE)")
      .option("--ask-passphrase", "also protect it with a passphrase typed at the terminal")
      .option("--plain", "store the value itself, not encrypted here (programs that read it through the API)")
      .option("--max-failures <n>", "burn the secret after N refused reveals (a wrong passphrase or a damaged link; default: never)")
      .option("--file <file>", "share FILE (its name and media type kept, inside the encryption) instead of a value"),
  )
    .addHelpText(
      "after",
      `
The link opens a page with a Reveal button (link previews cannot burn it), or
is read back with: ephemeral-vault get '<link>'. The key is the part after #:
the vault never receives it. The link alone is on stdout; stderr has the
sender's receipt (vrc_...): ephemeral-vault status RECEIPT tells whether the
link was opened, ephemeral-vault destroy RECEIPT destroys it.

Examples:
  ephemeral-vault share "the wifi password" --ttl 1h
  ephemeral-vault share < id_ed25519 --ttl 15m --reads 1
  ephemeral-vault share --ask-passphrase < db.txt
  ephemeral-vault share --file report.pdf --ttl 1d     (a file, up to the vault's VAULT_MAX_FILE_BYTES)

Exit codes: 0 ok, 1 the API refused (its error on stderr), 2 usage error or vault not reachable.`,
    )
    .action(
      async (value: string | undefined, flags: ConnectionFlags & PassphraseFlags & { ttl?: string; reads?: string; plain?: boolean; maxFailures?: string; file?: string }) => {
      if (flags.org !== undefined || (process.env.VAULT_ORG ?? "") !== "") {
        throw new ConfigError("share makes a public, global link: --org (VAULT_ORG) does not apply; unset it, or use put --org");
      }
      const ttlSeconds = flags.ttl === undefined ? undefined : parseDuration(flags.ttl);
      const maxReads = flags.reads === undefined ? undefined : parseReads(flags.reads);
      const maxFailedReveals = flags.maxFailures === undefined ? undefined : parseMaxFailures(flags.maxFailures);
      if (flags.plain === true && maxFailedReveals !== undefined) throw new ConfigError("--plain cannot take --max-failures: a plain link has no reveal proof");
      const passphrase = await passphraseOf(flags, flags.askPassphrase === true);
      if (passphrase !== undefined && [...passphrase].length < 12) {
        throw new ConfigError("the passphrase must be at least 12 characters (docs/share.md, 'The passphrase's strength and its offline cost')");
      }
      if (flags.plain === true && passphrase !== undefined) throw new ConfigError("--plain cannot take a passphrase: the passphrase needs the end-to-end envelope");
      if (flags.file !== undefined && value !== undefined) throw new ConfigError("give a VALUE or --file FILE, not both");
      if (flags.file !== undefined && flags.plain === true) throw new ConfigError("--plain cannot take --file: a file is always shared end to end");
      const file = flags.file === undefined ? undefined : readShareFile(flags.file);
      await callVault(flags, exit, async (client) => {
        if (value !== undefined) process.stderr.write(argvWarning("VALUE"));
        const content = file !== undefined ? { file } : (value ?? (await readStdin()));
        const { url, receipt } = await client.share(content, { ttlSeconds, maxReads, passphrase, plain: flags.plain === true, maxFailedReveals });
        process.stdout.write(`${url}\n`);
        // stdout stays the link alone (scripts take it); the sender's receipt goes to stderr (docs/cli.md, "Receipts").
        process.stderr.write(receiptNotice(receipt));
      });
      },
    );
}

/**
 * The line `share` writes to stderr after the link: the sender's receipt
 * and the two commands that use it (docs/cli.md, "Receipts"). The receipt
 * cannot read the secret, so it may be shown.
 */
export function receiptNotice(receipt: string): string {
  return `receipt: ${receipt} (ephemeral-vault status ${receipt} tells whether it was opened; destroy it with ephemeral-vault destroy ${receipt})\n`;
}

/**
 * `--max-failures N`: an integer from 1 to 1000 (docs/share.md, "The reveal proof").
 * @throws ConfigError otherwise.
 */
export function parseMaxFailures(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(n) || n < 1 || n > 1000) throw new ConfigError("--max-failures must be an integer from 1 to 1000");
  return n;
}

/** Tries at a terminal before `get <link>` gives up on a wrong passphrase (nothing is read by a wrong one). */
const PASSPHRASE_TRIES = 3;

/**
 * Whether the recipient page of `link` still names a live public secret:
 * `GET <base>/s/<id>`, which reads nothing (docs/share.md, "The recipient
 * page"); asked after a refused passphrase, since the refusal that reaches
 * the link's max_failed_reveals destroys it (docs/share.md, "The reveal proof").
 * @param timeoutMs the request's limit, milliseconds (0: none).
 * @returns false only for a 404; true for any other answer or a failed request (the next try says what is wrong).
 */
async function linkIsLive(link: ShareLink, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`${link.base}/s/${link.id}`, { signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : null, redirect: "manual" });
    await res.body?.cancel();
    return res.status !== 404;
  } catch {
    return true;
  }
}

/** The link `get` was given, when its argument is one (`http(s)://.../s/<id>[#key]` or `.../secrets/<id>`). */
export function shareLinkArgument(arg: string): ShareLink | undefined {
  return /^https?:\/\//i.test(arg) ? parseShareLink(arg) : undefined;
}

/**
 * `get <link>`: reveals a share link (one read) and prints the value,
 * byte-exact. A `/s/` link needs no token (the id is the capability); a
 * `/secrets/` link is read with the usual connection. The passphrase is
 * asked for before the read when the link says it needs one; one typed at
 * the terminal is asked for again when the vault refuses it (nothing read),
 * PASSPHRASE_TRIES tries in all, then it gives up with exit 1 (docs/cli.md).
 * `-o FILE` writes the value or file there (outputOf: created before the
 * read, mode 0600, never over an existing file without `--force`); without
 * it a file goes to stdout only when stdout is no terminal (docs/cli.md, "Files"):
 * a link whose fragment says it holds a file (`.f`) is refused at a
 * terminal before the read, and one made without the hint that turns out to
 * hold a file is saved beside (outputOf), so the read is never lost.
 * @throws ConfigError (exit 2, nothing read) for a text that is no share
 *   link, or a `.f` link at a terminal without `-o`.
 */
export async function getLink(link: string, flags: ConnectionFlags & PassphraseFlags & OutputFlags, exit: ExitCode): Promise<void> {
  const parsed = parseShareLink(link);
  if (parsed === undefined) throw new ConfigError("not a share link");
  // A link that says it holds a file, at a terminal without -o: refused before the read (and before any passphrase prompt).
  if (parsed.holdsFile && flags.output === undefined && process.stdout.isTTY === true) {
    throw new ConfigError("this link holds a file: give -o FILE to save it, or redirect stdout (nothing was read)");
  }
  let passphrase = await passphraseOf(flags, parsed.needsPassphrase);
  // Typed at the terminal (no file, no variable): a wrong one that the vault refused spent nothing, so ask again.
  const typed = parsed.needsPassphrase && flags.passphraseFile === undefined && (process.env.VAULT_SHARE_PASSPHRASE ?? "") === "";
  // Settled before the read: an existing -o FILE without --force is refused with nothing spent.
  const out = outputOf(flags.output, flags.force === true);
  let written = false;
  const reveal = async (client: VaultClient) => {
    for (let attempt = 1; ; attempt++) {
      try {
        out.write(await client.open(link, { passphrase }));
        written = true;
        return;
      } catch (err) {
        if (!(err instanceof EnvelopeError)) throw err;
        const retry = typed && err.reason === "passphrase" && !err.readSpent;
        if (retry && attempt < PASSPHRASE_TRIES) {
          // A refusal that reached the link's max_failed_reveals destroyed it: asking again would be in vain.
          if (parsed.kind === "page" && !(await linkIsLive(parsed, timeoutOf(flags)))) {
            process.stderr.write("ephemeral-vault: the secret is gone: too many wrong passphrases destroyed it (or it expired); nothing was read\n");
            exit.code = EXIT_REFUSED;
            return;
          }
          process.stderr.write(`ephemeral-vault: ${err.message}\n`);
          passphrase = await passphraseOf(flags, true);
          continue;
        }
        // The last try refused: say that it gave up (the vault's refusal spent nothing), not "try again".
        process.stderr.write(retry ? `ephemeral-vault: gave up after ${PASSPHRASE_TRIES} wrong passphrases; nothing was read\n` : `ephemeral-vault: ${err.message}\n`);
        exit.code = EXIT_REFUSED;
        return;
      }
    }
  };
  try {
    if (parsed.kind === "api") {
      await callVault(flags, exit, reveal);
      return;
    }
    try {
      await reveal(new VaultClient({ fetch: cliFetch(), addr: parsed.base, token: undefined, org: null, timeoutMs: timeoutOf(flags) }));
    } catch (err) {
      const failure = describeFailure(err);
      if (failure === null) throw err;
      process.stderr.write(`ephemeral-vault: ${failure.message}\n`);
      exit.code = failure.code;
    }
  } finally {
    if (!written) out.abandon();
  }
}

/** The output flags of `get <link>`: `-o FILE` and `--force` (docs/cli.md, "Files"). */
export interface OutputFlags {
  output?: string;
  force?: boolean;
}

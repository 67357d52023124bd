import type { Command } from "commander";
import { ConfigError } from "../../config.js";
import type { VaultClient } from "@ephemeral-vault/client";
import { callVault } from "./call.js";
import type { ConnectionFlags } from "./connection.js";
import { argvWarning, withConnectionOptions } from "./connection.js";
import { parseDuration, parseReads } from "../duration.js";
import { formatTable } from "../table.js";
import type { ExitCode } from "../exit-codes.js";
import { readStdin } from "../stdin.js";
import { getLink, shareLinkArgument } from "./share.js";
import type { OutputFlags, PassphraseFlags } from "./share.js";

interface LimitFlags extends ConnectionFlags {
  ttl?: string;
  reads?: string;
}

const EXIT_HELP = `
Exit codes: 0 ok, 1 the API refused (its error on stderr, e.g. "ephemeral-vault: secret not found (404)"),
2 usage error or vault not reachable.`;

function limits(flags: LimitFlags): { ttlSeconds?: number; maxReads?: number } {
  return {
    ...(flags.ttl === undefined ? {} : { ttlSeconds: parseDuration(flags.ttl) }),
    ...(flags.reads === undefined ? {} : { maxReads: parseReads(flags.reads) }),
  };
}

/**
 * `put KEY [VALUE] [--ttl DURATION] [--reads N] [--seal] [--force]`: prints
 * nothing on success. `--force` replaces a live secret (PUT, docs/cli.md)
 * instead of refusing it (409).
 */
export function registerPut(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("put")
      .description("store a keyed secret; VALUE omitted: read from stdin, byte-exact (keeps it out of shell history)")
      .argument("<key>", "the secret's key, e.g. prod/db_password")
      .argument("[value]", "the value; omit it to read stdin to its end")
      .option("--ttl <duration>", "expire after DURATION: seconds or 30s, 15m, 2h, 7d")
      .option("--reads <n>", "burn after N reads")
      .option("--seal", "with --org: seal instead of deleting when the reads run out")
      .option("--force", "replace the value and limits of a live secret of KEY in one step (read count back to 0; readers never see it missing)"),
  )
    .addHelpText(
      "after",
      `
Examples:
  printf %s "$DB_PASSWORD" | ephemeral-vault put prod/db_password --ttl 7d
  ephemeral-vault put ci/deploy_token < token.txt --reads 1
  ephemeral-vault put greeting "hello" --ttl 15m
  ephemeral-vault put --force prod/db_password < new-password.txt   # rotate: the limits given replace the old ones
${EXIT_HELP}`,
    )
    .action(async (key: string, value: string | undefined, flags: LimitFlags & { seal?: boolean; force?: boolean }) => {
      const options = { ...limits(flags), ...(flags.seal === true ? { seal: true } : {}) };
      await callVault(flags, exit, async (client, connection) => {
        if (options.seal === true && connection.org === undefined) throw new ConfigError("--seal applies to org secrets only (give --org)");
        if (value !== undefined) process.stderr.write(argvWarning("VALUE"));
        const text = value ?? (await readStdin());
        if (flags.force === true) await client.replace(key, text, options);
        else await client.put(key, text, options);
      });
    });
}

/** `get KEY [--json]`: the value exactly (a trailing newline only on a terminal), or the whole body. */
export function registerGet(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("get")
      .description("print a secret's value exactly as stored (counts a read; may burn it)")
      .argument("<key>", "the secret's key, a public secret's id, or a share link (http(s)://.../s/<id>#<key>)")
      .option("--json", "print the whole response as JSON")
      .option("--passphrase-file <file>", "a share link's passphrase, from FILE's first line (VAULT_SHARE_PASSPHRASE)")
      .option("-o, --output <file>", "a share link: write the value or file to FILE (mode 0600; decided before the read)")
      .option("--force", "with -o: overwrite FILE if it exists"),
  )
    .addHelpText(
      "after",
      `
The value goes to stdout byte-exact; a newline is added only when stdout is a terminal.

Examples:
  ephemeral-vault get prod/db_password
  DB_PASSWORD="$(ephemeral-vault get prod/db_password)"
  ephemeral-vault get prod/db_password --json
  ephemeral-vault get 'https://vault.example.com/s/3f2a...#Jq9...'   (a share link: no token needed)
  ephemeral-vault get '<link to a file>' -o report.pdf                (refuses an existing file without --force)

A link to a file goes to stdout only when stdout is not a terminal; at a terminal
it is saved in the current directory under its (sanitized) name, never over a file.
${EXIT_HELP}`,
    )
    .action(async (key: string, flags: ConnectionFlags & PassphraseFlags & OutputFlags & { json?: boolean }) => {
      if (shareLinkArgument(key) !== undefined) {
        if (flags.json === true) throw new ConfigError("--json does not apply to a share link");
        if (flags.force === true && flags.output === undefined) throw new ConfigError("--force goes with -o FILE");
        await getLink(key, flags, exit);
        return;
      }
      if (flags.output !== undefined || flags.force === true) throw new ConfigError("-o and --force apply to a share link (http(s)://.../s/<id>#<key>)");
      await callVault(flags, exit, async (client) => {
        const body = await client.get(key);
        if (flags.json === true) {
          process.stdout.write(`${JSON.stringify(body)}\n`);
          return;
        }
        process.stdout.write(process.stdout.isTTY ? `${body.value}\n` : body.value);
      });
    });
}

/** `ls [--prefix P] [--json]`: a table of key, reads, expires (never values). */
export function registerLs(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("ls")
      .description("list secrets' metadata: key, reads, expiry (never values)")
      .option("--prefix <prefix>", "only keys starting with PREFIX")
      .option("--json", "print the entries as a JSON array"),
  )
    .addHelpText(
      "after",
      `
Examples:
  ephemeral-vault ls
  ephemeral-vault ls --prefix prod/
  ephemeral-vault ls --json
${EXIT_HELP}`,
    )
    .action(async (flags: ConnectionFlags & { prefix?: string; json?: boolean }) => {
      await callVault(flags, exit, async (client) => {
        const entries = await listAll(client, flags.prefix);
        if (flags.json === true) {
          process.stdout.write(`${JSON.stringify(entries)}\n`);
          return;
        }
        process.stdout.write(formatTable(entries));
      });
    });
}

/** `rm KEY`: prints nothing on success. */
export function registerRm(program: Command, exit: ExitCode): void {
  withConnectionOptions(program.command("rm").description("delete a secret").argument("<key>", "the secret's key (or a public secret's id)"))
    .addHelpText("after", `\nExamples:\n  ephemeral-vault rm prod/db_password\n${EXIT_HELP}`)
    .action(async (key: string, flags: ConnectionFlags) => {
      await callVault(flags, exit, async (client) => {
        await client.delete(key);
      });
    });
}

/** `patch KEY [--ttl DURATION] [--reads N]`: prints nothing on success. */
export function registerPatch(program: Command, exit: ExitCode): void {
  withConnectionOptions(
    program
      .command("patch")
      .description("set a new TTL (from now) and/or a new read limit (the read count starts again at 0)")
      .argument("<key>", "the secret's key (or a public secret's id)")
      .option("--ttl <duration>", "new TTL from now: seconds or 30s, 15m, 2h, 7d")
      .option("--reads <n>", "new read limit"),
  )
    .addHelpText("after", `\nExamples:\n  ephemeral-vault patch prod/db_password --ttl 2h\n  ephemeral-vault patch prod/db_password --reads 3\n${EXIT_HELP}`)
    .action(async (key: string, flags: LimitFlags) => {
      const options = limits(flags);
      if (options.ttlSeconds === undefined && options.maxReads === undefined) throw new ConfigError("patch needs --ttl or --reads");
      await callVault(flags, exit, async (client) => {
        await client.patch(key, options);
      });
    });
}

/** Every metadata entry under `prefix`, following next_cursor across pages. */
async function listAll(client: VaultClient, prefix: string | undefined): Promise<Array<Record<string, unknown>>> {
  const entries: Array<Record<string, unknown>> = [];
  let cursor: string | undefined;
  do {
    const page = await client.list({ ...(prefix === undefined ? {} : { prefix }), ...(cursor === undefined ? {} : { cursor }) });
    entries.push(...page.secrets);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return entries;
}

import type { Command } from "commander";
import { describeFailure, VaultApiError, VaultClient } from "@ephemeral-vault/client";
import type { LoginKey } from "@ephemeral-vault/client";
import { EXIT_REFUSED } from "../exit-codes.js";
import type { ExitCode } from "../exit-codes.js";
import { cliFetch } from "./ca-fetch.js";
import { resolveAddress } from "./connection.js";
import { loginFilePath, readLogin, removeLogin, writeLogin } from "./login-file.js";

/** The flags of `login` and `logout`: the vault's address only (no token: the sign-in makes one). */
interface LoginFlags {
  addr?: string;
}

/** Unix seconds as `2026-12-02T10:15:00Z`. */
function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, "Z");
}

/** A failed call as one line on stderr and its exit code (describeFailure); anything else is rethrown. */
function fail(err: unknown, exit: ExitCode): void {
  const failure = describeFailure(err);
  if (failure === null) throw err;
  process.stderr.write(`ephemeral-vault: ${failure.message}\n`);
  exit.code = failure.code;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls a started device sign-in every `interval` seconds (five more after
 * each `slow_down`, RFC 8628 §3.5) until the person approved or the code
 * expired.
 * @returns the minted key, or undefined when the code expired first.
 */
async function waitForKey(client: VaultClient, deviceId: string, intervalSeconds: number, expiresInSeconds: number): Promise<LoginKey | undefined> {
  const until = Date.now() + expiresInSeconds * 1000;
  let interval = Math.max(1, intervalSeconds);
  while (Date.now() < until) {
    await sleep(interval * 1000);
    const polled = await client.pollDeviceLogin(deviceId);
    if (polled === "slow_down") interval += 5;
    else if (polled !== "pending") return polled;
  }
  return undefined;
}

/**
 * `login [--addr URL]` (docs/cli.md, "Signing in"; docs/sso.md, "The
 * CLI"): signs the person in with the vault's identity provider by the
 * device authorization grant: prints the code and the address to enter it
 * at on stderr, waits for the approval, and stores the short-lived
 * principal key the vault mints (VAULT_OIDC_KEY_TTL) with the vault's
 * address in the login file (login-file.ts, mode 0600). Later commands use
 * it when no token is given. Exit 0 signed in; 1 refused (no mapped role,
 * denied, expired); 2 usage error or vault not reachable.
 */
export function registerLogin(program: Command, exit: ExitCode): void {
  program
    .command("login")
    .description("sign in with the vault's identity provider; stores a short-lived key for later commands")
    .option("--addr <url>", "vault address (VAULT_ADDR; default: the stored login's, else a local vault's, else http://127.0.0.1:8484)")
    .addHelpText(
      "after",
      `
Prints a code and an address: open the address in any browser, enter the
code and sign in there. The vault then mints a principal key for you
(valid VAULT_OIDC_KEY_TTL, 12 hours by default) and this command stores it
with the vault's address in ${loginFilePath()} (mode 0600);
later commands use it when no VAULT_TOKEN or --token is given, and its org
is their default org. Nothing of the identity provider is stored.

Example:
  ephemeral-vault login --addr https://vault.example.com

Exit codes: 0 signed in, 1 refused or the code expired, 2 usage error or vault not reachable.`,
    )
    .action(async (flags: LoginFlags) => {
      const { addr } = resolveAddress(flags);
      const client = new VaultClient({ fetch: cliFetch(), addr, token: undefined, org: null, timeoutMs: 30_000 });
      try {
        const start = await client.startDeviceLogin();
        process.stderr.write(
          `To sign in, open ${start.verificationUri} and enter the code ${start.userCode}\n` +
            (start.verificationUriComplete === null ? "" : `(or open ${start.verificationUriComplete})\n`) +
            `Waiting for you (the code is valid ${Math.round(start.expiresIn / 60)} minutes)...\n`,
        );
        const key = await waitForKey(client, start.deviceId, start.interval, start.expiresIn);
        if (key === undefined) {
          process.stderr.write("ephemeral-vault: the code expired before the sign-in was approved: run ephemeral-vault login again\n");
          exit.code = EXIT_REFUSED;
          return;
        }
        const file = writeLogin({ url: addr, token: key.key, key_id: key.id, org_id: key.orgId, valid_before: key.validBefore });
        process.stderr.write(`Signed in as ${key.principalName} (role ${key.role} in ${key.orgId}); the key expires at ${iso(key.validBefore)}, stored in ${file}\n`);
      } catch (err) {
        fail(err, exit);
      }
    });
}

/**
 * `logout` (docs/cli.md, "Signing in"): revokes the stored key at its vault
 * (DELETE /me/keys/<id>: 401 from then on) and removes the login file. A
 * key the vault no longer knows (expired or revoked already) is only
 * removed here. Exit 0; 2 when the vault is not reachable (the file is then
 * kept, so that a later logout can revoke it).
 */
export function registerLogout(program: Command, exit: ExitCode): void {
  program
    .command("logout")
    .description("revoke the key `login` stored and remove it")
    .addHelpText(
      "after",
      `
Revokes the stored key at its vault at once, then removes ${loginFilePath()}.

Exit codes: 0 signed out (or there was no login), 2 vault not reachable (the file is kept).`,
    )
    .action(async () => {
      const login = readLogin();
      if (login === undefined) {
        process.stderr.write("ephemeral-vault: not signed in (no stored login)\n");
        return;
      }
      const client = new VaultClient({ fetch: cliFetch(), addr: login.url, token: login.token, org: null, timeoutMs: 30_000 });
      try {
        await client.me.deleteKey(login.key_id);
        process.stderr.write(`Signed out: key ${login.key_id} revoked\n`);
      } catch (err) {
        if (!(err instanceof VaultApiError && (err.status === 401 || err.status === 404))) {
          fail(err, exit);
          return;
        }
        process.stderr.write(`Signed out: key ${login.key_id} had already expired or been revoked\n`);
      }
      removeLogin();
    });
}


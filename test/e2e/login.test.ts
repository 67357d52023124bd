import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { approveDevice, CookieFetch, startTestIdp } from "../support/oidc-provider.js";
import type { TestIdp } from "../support/oidc-provider.js";

// `ephemeral-vault login` / `logout` against the built server on both engines,
// with oidc-provider on loopback (docs/cli.md "Signing in", docs/sso.md "The CLI"):
// the device flow run by the CLI, the person's approval driven at the provider's
// pages by HTTP, the key stored mode 0600 and used by later commands, refused once
// its lifetime (VAULT_OIDC_KEY_TTL, short here) is over; logout revokes it at once.

const TTL_SECONDS = 12;

describe("ephemeral-vault login and logout", () => {
  let idp: TestIdp & { setRedirectUris(uris: string[]): void };
  let vault: VaultProcess;
  let orgId = "";
  let config = "";

  beforeAll(async () => {
    idp = await startTestIdp({ dana: { email: "dana@example.com", name: "Dana", groups: ["devs"] } });
    const dataDir = tempDir();
    const first = await startVault(dataDir);
    orgId = ((await (await first.request("POST", "/orgs", { name: "people" })).json()) as { id: string }).id;
    await first.stop();
    vault = await startVault(dataDir, {
      env: {
        VAULT_OIDC_ISSUER: idp.issuer,
        VAULT_OIDC_CLIENT_ID: idp.clientId,
        VAULT_OIDC_CLIENT_SECRET: idp.clientSecret,
        VAULT_OIDC_ORG: orgId,
        VAULT_OIDC_ROLE_MAP: "devs=writer",
        VAULT_OIDC_KEY_TTL: `${TTL_SECONDS}s`,
      },
    });
    idp.setRedirectUris([`${vault.url}/ui/oidc/callback`]);
    config = tempDir("ev-xdg-");
  }, 90_000);
  afterAll(async () => {
    await idp?.close();
    await killChildren();
    cleanupTemp();
  });

  /** Runs the CLI with the test's config dir and no token, to its end. */
  function cli(args: string[], onStderr?: (text: string) => void): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv({ XDG_CONFIG_HOME: config, VAULT_ADDR: vault.url }), stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
      child.stderr.setEncoding("utf8").on("data", (s: string) => {
        stderr += s;
        onStderr?.(stderr);
      });
      child.once("exit", (code) => resolve({ code, stdout, stderr }));
    });
  }

  /** `login`, approving the printed code at the provider as `login`. */
  async function login(person: string) {
    let approving: Promise<string> | undefined;
    const result = await cli(["login"], (text) => {
      const m = /open (\S+) and enter the code (\S+)/.exec(text);
      if (m !== null && approving === undefined) approving = approveDevice(new CookieFetch(), idp, m[1] as string, m[2] as string, person);
    });
    expect(approving, result.stderr).toBeDefined();
    await approving;
    return result;
  }

  const loginFile = () => join(config, "ephemeral-vault", "login.json");

  it("stores a short-lived key (mode 0600) that later commands use, refused after its lifetime", async () => {
    const result = await login("dana");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("Signed in as dana@example.com (role writer");
    const stat = statSync(loginFile());
    expect(stat.mode & 0o777).toBe(0o600);
    expect(statSync(join(config, "ephemeral-vault")).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(loginFile(), "utf8")) as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual(["key_id", "org_id", "token", "url", "valid_before"]);
    expect(stored).toMatchObject({ url: vault.url, org_id: orgId });
    expect(stored.token).toMatch(/^vpk_/);
    const validBefore = stored.valid_before as number;
    expect(validBefore - Date.now() / 1000).toBeLessThanOrEqual(TTL_SECONDS);
    // No VAULT_TOKEN, no --org: the stored key and its org.
    const put = await cli(["put", "app/db", "s3cret"]);
    expect(put.code, put.stderr).toBe(0);
    const get = await cli(["get", "app/db"]);
    expect(get.stdout.trim()).toBe("s3cret");
    // Past its valid_before the vault refuses it.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, validBefore * 1000 + 1500 - Date.now())));
    const late = await cli(["get", "app/db"]);
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("this key has expired");
  }, 90_000);

  it("logout revokes the stored key at once and removes the file", async () => {
    const result = await login("dana");
    expect(result.code, result.stderr).toBe(0);
    const stored = JSON.parse(readFileSync(loginFile(), "utf8")) as { token: string };
    expect((await vault.request("GET", "/me", undefined, stored.token)).status).toBe(200);
    const out = await cli(["logout"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("revoked");
    expect(() => statSync(loginFile())).toThrow();
    expect((await vault.request("GET", "/me", undefined, stored.token)).status).toBe(401);
  }, 90_000);
});

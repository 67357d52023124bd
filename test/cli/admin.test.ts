import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupTemp, cliAgainst, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { CliResult, VaultProcess } from "../support/e2e-helpers.js";
import { itSqlite } from "../support/helpers.js";

const cli = cliAgainst;

/** The one JSON line a `--json` command printed. */
function json<T>(result: CliResult): T {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

describe("the administration commands against a real vault", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: "true" } });
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("keys create prints the token once; ls never shows it; the key works until keys rm revokes it", () => {
    const created = cli(vault, ["keys", "create", "--name", "ci", "--permissions", "read,write", "--prefix", "ci/", "--expires-at", "2099-01-01"]);
    expect(created.code).toBe(0);
    const token = /^token:\s+(vsk_\S+)$/m.exec(created.stdout)?.[1] as string;
    const id = /^id:\s+(sk_\S+)$/m.exec(created.stdout)?.[1] as string;
    expect(token).toMatch(/^vsk_/);
    expect(created.stdout).toMatch(/^prefix:\s+ci\/$/m);
    expect(created.stdout).toMatch(/^expires_at:\s+2099-01-01T00:00:00Z$/m);

    const table = cli(vault, ["keys", "ls"]);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+PERMISSIONS\s+PREFIX\s+EXPIRES\s+LAST USED\n/);
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+ci\\s+read,write\\s+ci/\\s+2099-01-01T00:00:00Z\\s+-$`, "m"));
    expect(table.stdout).not.toContain(token);
    const listed = json<Array<Record<string, unknown>>>(cli(vault, ["keys", "ls", "--json"]));
    expect(listed.find((k) => k.id === id)).toMatchObject({ name: "ci", permissions: ["read", "write"], prefix: "ci/" });
    expect(JSON.stringify(listed)).not.toContain(token);

    const quiet = cli(vault, ["keys", "create", "--name", "q", "--permissions", "read", "-q"]);
    expect(quiet.stdout).toMatch(/^vsk_[\w-]+\n$/);

    expect(cli(vault, ["put", "ci/x", "v"], { VAULT_TOKEN: token }).code).toBe(0);
    expect(cli(vault, ["keys", "rm", id])).toEqual({ code: 0, stdout: "", stderr: "" });
    const revoked = cli(vault, ["get", "ci/x"], { VAULT_TOKEN: token });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toContain("(401)");
  });

  it("bad input is a usage error (2) or the API's 400 (1), and nothing is created", () => {
    expect(cli(vault, ["keys", "create", "--name", "x"]).code).toBe(2);
    expect(cli(vault, ["keys", "create", "--name", "x", "--permissions", "read", "--expires-at", "tomorrow"]).code).toBe(2);
    const refused = cli(vault, ["keys", "create", "--name", "bad", "--permissions", "root"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(400\)\n$/);
    expect(json<Array<{ name: string }>>(cli(vault, ["keys", "ls", "--json"])).map((k) => k.name)).not.toContain("bad");
    // A group without its subcommand is a usage error; its help goes to stderr.
    const bare = cli(vault, ["keys"]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toContain("keys create");
    expect(cli(vault, ["keys", "--help"]).code).toBe(0);
  });

  it("orgs: org -> role -> principal -> key, then the principal uses its key; listings and teardown", () => {
    const org = cli(vault, ["orgs", "create", "--name", "acme", "-q"]).stdout.trim();
    expect(org).toMatch(/^org_/);
    expect(cli(vault, ["orgs", "roles", "create", org, "--name", "deployer", "--permissions", "rlc"]).code).toBe(0);
    const roles = json<Array<{ name: string; permissions: string; builtin: boolean }>>(cli(vault, ["orgs", "roles", "ls", org, "--json"]));
    expect(roles.find((r) => r.name === "deployer")).toMatchObject({ permissions: "rlc", builtin: false });
    const prn = cli(vault, ["orgs", "principals", "create", org, "--name", "bot", "--role", "deployer", "-q"]).stdout.trim();
    expect(prn).toMatch(/^prn_/);
    const keyAnswer = json<{ id: string; key: string }>(cli(vault, ["orgs", "keys", "create", org, prn, "--name", "laptop", "--json"]));
    expect(keyAnswer.key).toMatch(/^vpk_/);

    const env = { VAULT_TOKEN: keyAnswer.key, VAULT_ORG: org };
    expect(cli(vault, ["put", "app/one", "v1"], env).code).toBe(0);
    expect(cli(vault, ["get", "app/one"], env).stdout).toBe("v1");

    expect(cli(vault, ["orgs", "ls"]).stdout).toMatch(new RegExp(`^${org}\\s+acme\\s+\\d{4}-`, "m"));
    expect(cli(vault, ["orgs", "principals", "ls", org]).stdout).toMatch(new RegExp(`^${prn}\\s+bot\\s+deployer\\s`, "m"));
    const keys = cli(vault, ["orgs", "keys", "ls", org, prn]);
    expect(keys.stdout).toMatch(new RegExp(`^${keyAnswer.id}\\s+laptop\\s`, "m"));
    expect(keys.stdout).not.toContain(keyAnswer.key);
    expect(cli(vault, ["orgs", "show", org, "--json"]).stdout).toContain('"name":"acme"');

    // No cascades: the principal with a key cannot go (409), then can once the key is revoked.
    const busy = cli(vault, ["orgs", "principals", "rm", org, prn]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain("(409)");
    expect(cli(vault, ["orgs", "keys", "rm", org, prn, keyAnswer.id]).code).toBe(0);
    expect(cli(vault, ["get", "app/one"], env).code).toBe(1);
    expect(cli(vault, ["orgs", "principals", "rm", org, prn]).code).toBe(0);
  });

  it("audit ls shows entries with filters, and the org's log with --org", () => {
    expect(cli(vault, ["put", "audited/k", "v"]).code).toBe(0);
    expect(cli(vault, ["get", "audited/k"]).code).toBe(0);
    const table = cli(vault, ["audit", "ls", "--key", "audited/k", "--action", "secret.read"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TIME\s+ACTION\s+KEY\s+ACTOR\s+IP\n\d{4}-[^\n]*secret\.read\s+audited\/k\s/);
    const page = json<{ entries: Array<{ action: string; key: string }> }>(cli(vault, ["audit", "ls", "--key", "audited/k", "--json", "--since", "2020-01-01"]));
    expect(page.entries.map((e) => e.action).sort()).toEqual(["secret.created", "secret.read"]);
    const limited = cli(vault, ["audit", "ls", "--limit", "1"]);
    expect(limited.stdout.trim().split("\n")).toHaveLength(2);
    expect(limited.stderr).toMatch(/^more: --cursor \S+\n$/);

    const org = cli(vault, ["orgs", "create", "--name", "audited-org", "-q"]).stdout.trim();
    expect(cli(vault, ["orgs", "principals", "create", org, "--name", "p", "--role", "reader"]).code).toBe(0);
    const orgLog = cli(vault, ["audit", "ls", "--org", org]);
    expect(orgLog.stdout).toMatch(/^TIME\s+ACTION\s+KEY\s+PRINCIPAL\s+IP\n[^\n]*principal\.created/);
  });

  // The data-dir form of audit verify: PostgreSQL has no data dir (its form is --database-url).
  itSqlite("audit verify still checks the chain of a data directory", async () => {
    const dataDir = tempDir();
    const local = await startVault(dataDir);
    expect((await local.request("POST", "/secrets", { key: "a", value: "b" })).status).toBe(201);
    await local.stop();
    const verified = cli(vault, ["audit", "verify", "--data-dir", dataDir]);
    expect(verified.code, verified.stderr).toBe(0);
  });

  it("webhooks: create prints the secret once, ls/rotate/deliveries/rm; --org for an org's", () => {
    const created = cli(vault, ["webhooks", "create", "--url", "https://hooks.example.com/v", "--events", "secret.read,secret.burned", "--description", "pager"]);
    expect(created.code, created.stderr).toBe(0);
    const secret = /^secret:\s+(whsec_\S+)$/m.exec(created.stdout)?.[1] as string;
    const id = /^id:\s+(wh_\S+)$/m.exec(created.stdout)?.[1] as string;
    expect(secret).toMatch(/^whsec_/);
    const table = cli(vault, ["webhooks", "ls"]);
    expect(table.stdout).toMatch(new RegExp(`^${id}\\s+https://hooks\\.example\\.com/v\\s+secret\\.read,secret\\.burned\\s+pager\\s`, "m"));
    expect(table.stdout).not.toContain(secret);
    const rotated = cli(vault, ["webhooks", "rotate", id, "--json"]);
    expect(json<{ secret: string }>(rotated).secret).not.toBe(secret);
    expect(cli(vault, ["webhooks", "deliveries", id]).stdout).toBe("no deliveries\n");
    expect(cli(vault, ["webhooks", "rm", id]).code).toBe(0);
    expect(cli(vault, ["webhooks", "rm", id]).code).toBe(1);

    const org = cli(vault, ["orgs", "create", "--name", "hooked", "-q"]).stdout.trim();
    const orgHook = json<{ id: string; org_id: string }>(cli(vault, ["webhooks", "create", "--org", org, "--url", "https://hooks.example.com/o", "--events", "*", "--json"]));
    expect(orgHook.org_id).toBe(org);
    expect(json<Array<{ id: string }>>(cli(vault, ["webhooks", "ls", "--org", org, "--json"])).map((w) => w.id)).toEqual([orgHook.id]);
    expect(json<Array<{ id: string }>>(cli(vault, ["webhooks", "ls", "--json"])).map((w) => w.id)).not.toContain(orgHook.id);
  });
});

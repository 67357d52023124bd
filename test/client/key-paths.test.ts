import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeKey, VaultApiError, VaultClient, VaultInputError } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, databaseUrlOf, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { rejection, TEST_ENGINE } from "../support/helpers.js";

/**
 * No key or id a client is given can leave its route (docs/client.md): the
 * URL parser resolves `.` and `..` segments (fetch sends `/secrets/../keys/x`
 * as `/keys/x`), so the typed client refuses such keys and ids before any
 * request, the command line reports it as a usage error (exit 2, one line)
 * and the MCP server as a tool error. Against a real vault process.
 */

let vault: VaultProcess;
let dataDir: string;
let master: VaultClient;

beforeAll(async () => {
  dataDir = tempDir();
  vault = await startVault(dataDir);
  master = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY, org: null });
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

/** A scoped key made with the master key, and whether it still authenticates (GET /keys answers, not 401). */
async function scopedKey(): Promise<{ id: string; works: () => Promise<boolean> }> {
  const created = await master.keys.create({ name: "victim", permissions: ["admin"], prefix: "victim/" });
  const own = new VaultClient({ addr: vault.url, token: created.token, org: null });
  return {
    id: created.id,
    works: async () => {
      try {
        await own.keys.list();
        return true;
      } catch (err) {
        if (err instanceof VaultApiError && err.status === 401) return false;
        throw err;
      }
    },
  };
}

/** A client whose fetch records every URL it is asked for and answers 200 `{}`. */
function recordingClient(org?: string): { client: VaultClient; urls: string[] } {
  const urls: string[] = [];
  const client = new VaultClient({
    addr: "http://vault.invalid",
    token: "t",
    org: org ?? null,
    fetch: async (url) => {
      urls.push(url);
      return new Response("{}", { status: 200, headers: { "content-type": "application/json" } });
    },
  });
  return { client, urls };
}

describe("VaultClient", () => {
  it("refuses delete and get of ../keys/<id> before any request; the scoped key still works", async () => {
    const victim = await scopedKey();
    const key = `../keys/${victim.id}`;
    for (const call of [() => master.delete(key), () => master.get(key), () => master.exists(key), () => master.patch(key, { maxReads: 1 })]) {
      const err = await rejection(call());
      expect(err).toBeInstanceOf(VaultInputError);
      expect(err).toMatchObject({ field: "key" });
      expect((err as Error).message).not.toContain(victim.id);
    }
    expect(await victim.works()).toBe(true);
  });

  it("sends nothing for a key with an empty, . or .. segment, or an id that is empty, . or ..", async () => {
    const { client, urls } = recordingClient();
    for (const key of ["../keys/sk_x", "prod/../x", "prod/./x", "prod//x", "prod/x/", "/x", "", "..", ".", "a/.."]) {
      for (const call of [() => client.get(key), () => client.delete(key), () => client.exists(key), () => client.patch(key, { ttlSeconds: 5 })]) {
        expect(await rejection(call()), JSON.stringify(key)).toBeInstanceOf(VaultInputError);
      }
      expect(() => encodeKey(key)).toThrow(VaultInputError);
    }
    // A principal key's client on its org: /orgs/ORG/secrets/../../../me/keys/ID would be DELETE /me/keys/ID.
    const org = recordingClient("org_x");
    expect(await rejection(org.client.delete("../../../me/keys/pk_x"))).toBeInstanceOf(VaultInputError);
    expect(org.urls).toEqual([]);
    for (const id of ["..", ".", ""]) {
      for (const call of [
        () => client.keys.delete(id),
        () => client.orgs.get(id),
        () => client.orgs.delete(id),
        () => client.me.deleteKey(id),
        () => client.webhooks.delete(id),
        () => client.webhooks.deliveries(id),
        () => recordingClient("org_x").client.orgs.of("org_x").principals.deleteKey("prn_x", id),
        () => recordingClient("org_x").client.orgs.of("org_x").roles.delete(id),
        () => recordingClient(id).client.get("db"),
        () => recordingClient(id).client.prune(),
      ]) {
        const err = await rejection(call());
        expect(err, JSON.stringify(id)).toBeInstanceOf(VaultInputError);
        expect(err).toMatchObject({ field: "id" });
      }
      expect(() => client.orgs.of(id)).toThrow(VaultInputError);
    }
    expect(urls).toEqual([]);
  });

  it("still sends keys whose segments merely contain dots, and encodes a literal %2e so it stays literal", async () => {
    const { client, urls } = recordingClient();
    await client.get("prod/.env");
    await client.get("prod/...");
    await client.get("prod/%2e%2e/x");
    await client.keys.delete("sk_.x");
    expect(urls).toEqual([
      "http://vault.invalid/secrets/prod/.env",
      "http://vault.invalid/secrets/prod/...",
      "http://vault.invalid/secrets/prod/%252e%252e/x",
      "http://vault.invalid/keys/sk_.x",
    ]);
  });
});

/** Runs the built command line against the vault with the master key. */
function cli(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY }),
    input: "",
    encoding: "utf8",
    timeout: 15_000,
    killSignal: "SIGKILL",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Renames a stored secret's key behind the vault's back, as a row written before keys were checked would be. */
async function renameStoredKey(from: string, to: string): Promise<void> {
  if (TEST_ENGINE === "pg") {
    const client = new pg.Client({ connectionString: databaseUrlOf(dataDir) });
    await client.connect();
    try {
      expect((await client.query("UPDATE secrets SET key = $1 WHERE key = $2", [to, from])).rowCount).toBe(1);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(join(dataDir, "vault.db"));
  try {
    db.pragma("busy_timeout = 5000");
    expect(db.prepare("UPDATE secrets SET key = ? WHERE key = ?").run(to, from).changes).toBe(1);
  } finally {
    db.close();
  }
}

describe("the command line", () => {
  it("rm ../keys/<id> is a usage error (exit 2, one line, no stack trace) and the scoped key still works", async () => {
    const victim = await scopedKey();
    const result = cli(["rm", `../keys/${victim.id}`]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^ephemeral-vault: invalid secret key: [^\n]+\n$/);
    expect(cli(["get", "../keys/x"]).code).toBe(2);
    expect(await victim.works()).toBe(true);
  });

  it("run --prefix prod never reads outside the prefix, even for a stored key with a .. segment", async () => {
    expect((await vault.request("POST", "/secrets", { key: "other/db_password", value: "not for prod" })).status).toBe(201);
    expect((await vault.request("POST", "/secrets", { key: "prod/escape", value: "placeholder" })).status).toBe(201);
    // The vault refuses such a key now (400); one stored before that rule could still be listed.
    expect((await vault.request("POST", "/secrets", { key: "prod/../other/db_password", value: "v" })).status).toBe(400);
    await renameStoredKey("prod/escape", "prod/../other/db_password");

    const result = cli(["run", "--no-mask", "--prefix", "prod", "--only", "___OTHER_DB_PASSWORD", "--", process.execPath, "-e", "process.stdout.write(String(process.env.___OTHER_DB_PASSWORD))"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^ephemeral-vault: invalid secret key: [^\n]+\n$/);
    const listed = (await (await vault.request("GET", "/secrets")).json()) as { secrets: Array<{ key: string; read_count: number }> };
    expect(listed.secrets.find((s) => s.key === "other/db_password")).toMatchObject({ read_count: 0 });
  });
});

describe("the MCP server", () => {
  /** Starts `ephemeral-vault mcp` with the master key, driven by the SDK's client. */
  async function connect(): Promise<Client> {
    const env = childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", "--allow-reveal"],
      cwd: ROOT,
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      stderr: "pipe",
    });
    const client = new Client({ name: "ephemeral-vault-test", version: "0.0.0" });
    await client.connect(transport);
    return client;
  }

  it("delete_secret and get_secret of ../keys/<id> are tool errors and the scoped key still works", async () => {
    const victim = await scopedKey();
    const client = await connect();
    try {
      for (const name of ["delete_secret", "get_secret"]) {
        const result = (await client.callTool({ name, arguments: { key: `../keys/${victim.id}` } })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        const first = result.content[0];
        expect(first?.type === "text" ? first.text : "").toMatch(/^invalid secret key: /);
      }
      const org = await master.orgs.create({ name: "mcp-victim" });
      const principal = await master.orgs.of(org.id).principals.create({ name: "bot", role: "reader" });
      const viaOrgs = (await client.callTool({
        name: "delete_secret",
        arguments: { key: `../orgs/${org.id}/principals/${principal.id}` },
      })) as CallToolResult;
      expect(viaOrgs.isError).toBe(true);
      expect((await master.orgs.of(org.id).principals.get(principal.id)).id).toBe(principal.id);
    } finally {
      await client.close();
    }
    expect(await victim.works()).toBe(true);
  });
});

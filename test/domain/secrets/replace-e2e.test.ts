import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VaultApiError, VaultClient } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";

/**
 * Replace (PUT) against a real server process (the built bin; on PostgreSQL
 * in the pg-matrix project): the client's replace(), the CLI's put --force,
 * and readers that never see the key missing while it is replaced.
 */

let vault: VaultProcess;
let client: VaultClient;

beforeAll(async () => {
  vault = await startVault(tempDir());
  client = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY, org: null });
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

function cli(args: string[], input = ""): { code: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY }),
    input,
    encoding: "utf8",
    timeout: 15_000,
    killSignal: "SIGKILL",
  });
  return { code: result.status, stderr: result.stderr };
}

describe("replace through the client and the CLI", () => {
  it("client.replace() creates (updated: false), then replaces (updated: true) with the read count reset", async () => {
    expect(await client.replace("e2e/rotate", "one", { maxReads: 5 })).toEqual({ key: "e2e/rotate", updated: false });
    await client.get("e2e/rotate");
    expect(await client.replace("e2e/rotate", "two", { maxReads: 2, ttlSeconds: 600 })).toEqual({ key: "e2e/rotate", updated: true });
    expect(await client.get("e2e/rotate")).toMatchObject({ value: "two", read_count: 1, max_reads: 2 });
    const refused = await client.replace("a".repeat(64), "x").catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(VaultApiError);
    expect((refused as VaultApiError).status).toBe(404);
  });

  it("put refuses a live key (exit 1); put --force replaces it", () => {
    expect(cli(["put", "e2e/cli"], "first").code).toBe(0);
    const refused = cli(["put", "e2e/cli"], "second");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("409");
    expect(cli(["put", "--force", "e2e/cli", "--reads", "3"], "second").code).toBe(0);
    expect(cli(["put", "--force", "e2e/cli-new"], "created").code).toBe(0);
  });

  it("put --force leaves the new value readable", async () => {
    expect(await client.get("e2e/cli")).toMatchObject({ value: "second", max_reads: 3, read_count: 1 });
    expect(await client.get("e2e/cli-new")).toMatchObject({ value: "created" });
  });
});

describe("replace under concurrent reads", () => {
  it("answers every GET 200 with one of the values while PUTs replace it again and again", async () => {
    await client.replace("e2e/hot", "v0");
    const values = new Set(["v0"]);
    const failures: string[] = [];
    let reads = 0;
    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 1; i <= 40; i++) {
          values.add(`v${i}`);
          await client.replace("e2e/hot", `v${i}`, { maxReads: 100_000 });
        }
      } finally {
        writing = false;
      }
    })();
    const reader = async () => {
      while (writing) {
        const res = await fetch(`${vault.url}/secrets/e2e/hot`, { headers: { authorization: `Bearer ${E2E_MASTER_KEY}` } });
        reads++;
        const text = await res.text();
        if (res.status !== 200) failures.push(`${res.status} ${text}`);
        else if (!values.has((JSON.parse(text) as { value: string }).value)) failures.push(`unknown value ${text}`);
      }
    };
    await Promise.all([writer, ...Array.from({ length: 8 }, reader)]);
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(0);
    expect(await client.get("e2e/hot")).toMatchObject({ value: "v40" });
  });
});

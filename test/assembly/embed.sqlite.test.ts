import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { startVault } from "../../src/index.js";
import type { EmbeddedVault } from "../../src/index.js";
import { VaultApiError } from "@ephemeral-vault/client";
import { ROOT } from "../support/e2e-helpers.js";

const run = promisify(execFile);
const opened: EmbeddedVault[] = [];
afterAll(async () => {
  await Promise.all(opened.map((v) => v.close()));
});

async function open(...args: Parameters<typeof startVault>): Promise<EmbeddedVault> {
  const vault = await startVault(...args);
  opened.push(vault);
  return vault;
}

describe("startVault (docs/embedding.md)", () => {
  it("starts on a free port of 127.0.0.1 with a generated master key, its client and its in-process fetch", async () => {
    const vault = await open();
    expect(vault.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(vault.url).not.toMatch(/:8484$/);
    expect(vault.token.length).toBeGreaterThanOrEqual(16);

    await vault.client.put("app/db", "s3cret");
    expect((await vault.client.get("app/db")).value).toBe("s3cret");

    // Over the socket, with the token.
    const overHttp = await fetch(`${vault.url}/secrets/app/db`, { headers: { authorization: `Bearer ${vault.token}` } });
    expect(overHttp.status).toBe(200);
    expect(((await overHttp.json()) as { value: string }).value).toBe("s3cret");

    // In process: a path, a URL or a Request.
    expect((await vault.fetch("/health")).status).toBe(200);
    expect((await vault.fetch("/")).status).toBe(200);
    const inProcess = await vault.fetch(new Request(`${vault.url}/secrets/app/db`, { headers: { authorization: `Bearer ${vault.token}` } }));
    expect(inProcess.status).toBe(200);
    expect((await vault.fetch("/secrets/app/db")).status).toBe(401);
  });

  it("two vaults in one process are independent: own port, data and master key", async () => {
    const a = await open();
    const b = await open();
    expect(a.url).not.toBe(b.url);
    expect(a.token).not.toBe(b.token);
    await a.client.put("only/in-a", "x");
    await expect(b.client.get("only/in-a")).rejects.toMatchObject({ status: 404 });
    // A's master key is nothing to B.
    const crossed = await fetch(`${b.url}/secrets`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(crossed.status).toBe(401);
    await a.close();
    // B goes on after A is closed.
    await b.client.put("in-b", "y");
    expect((await b.client.get("in-b")).value).toBe("y");
    await expect(fetch(`${a.url}/health`)).rejects.toThrow();
  });

  it("takes every setting by name with its type, validated as the flag would be", async () => {
    const vault = await open({ masterKey: "embedded-master-key-0123", settings: { maxValueBytes: 8, sharePage: false } });
    expect(vault.token).toBe("embedded-master-key-0123");
    await vault.client.put("small", "12345678");
    const err = await vault.client.put("big", "123456789").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultApiError);
    expect((err as VaultApiError).status).toBe(413);
    // The share page is off: no open page at / (a default vault serves it: 200).
    expect((await vault.fetch("/")).status).toBe(401);

    await expect(startVault({ port: 70_000 })).rejects.toThrow(/VAULT_PORT must be a whole number/);
    await expect(startVault({ masterKey: "short" })).rejects.toThrow(ConfigError);
    await expect(startVault({ settings: { sweepIntervalMs: 1.5 } })).rejects.toThrow(/VAULT_SWEEP_INTERVAL_MS/);
    await expect(startVault({ settings: { logLevel: "loud" as "warn" } })).rejects.toThrow(/VAULT_LOG_LEVEL/);
    // Unknown names (from JavaScript) are refused, not ignored.
    const unknown = { settings: { maxValueByte: 8 } } as unknown as Parameters<typeof startVault>[0];
    await expect(startVault(unknown)).rejects.toThrow(/unknown setting maxValueByte/);
  });

  it("refuses a setting named like a property every object has (constructor, toString) as unknown", async () => {
    for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
      const settings = JSON.parse(`{"${name}": 8}`) as Record<string, unknown>;
      const options = { settings } as unknown as Parameters<typeof startVault>[0];
      await expect(startVault(options), name).rejects.toThrow(new RegExp(`unknown setting ${name}`));
    }
  });

  it("does not read the process environment", async () => {
    process.env.VAULT_MAX_VALUE_BYTES = "4";
    try {
      const vault = await open();
      await vault.client.put("k", "longer than four bytes");
    } finally {
      delete process.env.VAULT_MAX_VALUE_BYTES;
    }
  });

  it("keeps a data dir: the same master key and data after close() and a new start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-embed-"));
    try {
      const first = await startVault({ dataDir: dir });
      await first.client.put("kept", "v1");
      // The dir is locked while the first runs.
      await expect(startVault({ dataDir: dir })).rejects.toThrow(/second vault|lock|in use/i);
      await first.close();
      const second = await startVault({ dataDir: dir });
      expect(second.token).toBe(first.token);
      expect((await second.client.get("kept")).value).toBe("v1");
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is quiet and leaves nothing running after close(): a script exits on its own", async () => {
    const index = pathToFileURL(join(ROOT, "dist", "index.js")).href;
    const script = `
      import { startVault } from ${JSON.stringify(index)};
      const a = await startVault();
      const b = await startVault({ settings: { sweepIntervalMs: 50 } });
      await a.client.put("k", "v");
      await b.client.put("k", "w", { ttlSeconds: 60 });
      if ((await a.client.get("k")).value !== "v") process.exit(3);
      await Promise.all([a.close(), b.close()]);
      // Closed handles leave the list on the next turn of the event loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const left = process.getActiveResourcesInfo().filter((r) => r !== "TTYWrap" && r !== "PipeWrap");
      process.stdout.write(JSON.stringify(left));
    `;
    // No process.exit: the child ends only when its event loop is empty.
    const { stdout, stderr } = await run(process.execPath, ["--input-type=module", "-e", script], { timeout: 20_000, env: { PATH: process.env.PATH } });
    expect(JSON.parse(stdout)).toEqual([]);
    expect(stderr).toBe("");
  });
});

import { execFile, spawn } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { VaultClient } from "@ephemeral-vault/client";
import { docExamples, exampleDir } from "../support/doc-examples.js";
import { BIN, ROOT, childEnv } from "../support/e2e-helpers.js";

const run = promisify(execFile);
const examples = docExamples("embedding.md");
const dir = exampleDir(examples);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The environment of an example: no VAULT_* of the developer's, no vitest of ours. */
function exampleEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = childEnv(extra);
  for (const name of Object.keys(env)) if (name.startsWith("VITEST") || name === "NODE_OPTIONS") delete env[name];
  return env;
}

describe("docs/embedding.md examples, as written", () => {
  it("has the examples the page promises", () => {
    expect([...examples.keys()].sort()).toEqual(["app.test.ts", "ci-vault.sh", "dev-vault.mjs", "vault-setup.ts", "vitest.config.ts"]);
  });

  it("the TypeScript examples type-check against the package's declarations (dist/index.d.ts)", async () => {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const files = [...examples.keys()].filter((name) => name.endsWith(".ts"));
    const flags = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--types", "node", "--skipLibCheck"];
    const result = await run(process.execPath, [tsc, ...flags, ...files], { cwd: dir, env: exampleEnv(), timeout: 60_000 }).catch((err: { stdout: string }) => err);
    expect(result.stdout).toBe("");
  });

  it("the vitest globalSetup seeds a vault that a test file reads", async () => {
    const vitest = join(ROOT, "node_modules", "vitest", "vitest.mjs");
    const { stdout } = await run(process.execPath, [vitest, "run", "--root", dir, "--reporter=dot"], {
      cwd: dir,
      env: exampleEnv(),
      timeout: 60_000,
    });
    expect(stdout).toMatch(/1 passed/);
  });

  it("the dev script seeds its secrets, prints the address and token, and stops on SIGINT", async () => {
    const dataDir = join(dir, "dev-data");
    const child = spawn(process.execPath, ["dev-vault.mjs"], { cwd: dir, env: exampleEnv({ DEV_VAULT_DIR: dataDir, DEV_VAULT_PORT: "0" }) });
    let out = "";
    let err = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const ready = await new Promise<boolean>((resolve) => {
      const poll = setInterval(() => {
        if (/VAULT_TOKEN=\S+\n/.test(out)) {
          clearInterval(poll);
          resolve(true);
        }
      }, 20);
      void exited.then(() => {
        clearInterval(poll);
        resolve(false);
      });
    });
    expect(ready, err).toBe(true);
    const addr = /VAULT_ADDR=(\S+)/.exec(out)?.[1] as string;
    const token = /VAULT_TOKEN=(\S+)/.exec(out)?.[1] as string;
    const client = new VaultClient({ addr, token, org: null });
    expect((await client.get("dev/stripe_key")).value).toBe("sk_test_123");
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(err).toBe("");
    // A second start finds its data dir: same token, nothing seeded twice.
    const again = spawn(process.execPath, ["dev-vault.mjs"], { cwd: dir, env: exampleEnv({ DEV_VAULT_DIR: dataDir, DEV_VAULT_PORT: "0" }) });
    let out2 = "";
    again.stdout.on("data", (b: Buffer) => (out2 += b.toString()));
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (/VAULT_TOKEN=\S+\n/.test(out2)) {
          clearInterval(poll);
          resolve();
        }
      }, 20);
    });
    expect(/VAULT_TOKEN=(\S+)/.exec(out2)?.[1]).toBe(token);
    again.kill("SIGINT");
    expect(await new Promise((resolve) => again.once("exit", resolve))).toBe(0);
  });

  it("serve --print-url-json: one JSON line on stdout, and a SIGTERM right after it is a graceful stop (exit 0)", async () => {
    for (let i = 0; i < 3; i++) {
      const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--data-dir", ":memory:", "--print-url-json"], { env: exampleEnv() });
      let out = "";
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      await new Promise<void>((resolve) =>
        child.stdout.on("data", (b: Buffer) => {
          out += b.toString();
          if (out.includes("\n")) resolve();
        }),
      );
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      const lines = out.split("\n").filter((l) => l !== "");
      expect(lines).toHaveLength(1);
      expect(Object.keys(JSON.parse(lines[0] as string) as object).sort()).toEqual(["token", "url"]);
    }
  });

  it("the CI job starts the command with --print-url-json and passes its url and token on", async () => {
    const shim = join(dir, "bin");
    mkdirSync(shim, { recursive: true });
    symlinkSync(process.env.EV_BINARY ?? BIN, join(shim, "ephemeral-vault"));
    const { stdout } = await run("bash", ["ci-vault.sh"], {
      cwd: dir,
      env: exampleEnv({ PATH: `${shim}:${process.env.PATH ?? ""}` }),
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^ok: http:\/\/127\.0\.0\.1:\d+\n$/);
  });
});

import { spawn } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";

/**
 * The runnable examples of the docs: every fenced `sh` block right after a
 * `<!-- test: run -->` line. The blocks of one page run in order, as one
 * bash script (`set -euo pipefail`), against a fresh vault, with the built
 * CLI on PATH as `ephemeral-vault` and VAULT_ADDR / VAULT_TOKEN set.
 */
function runnableBlocks(page: string): string[] {
  const text = readFileSync(join(ROOT, "docs", page), "utf8");
  const blocks: string[] = [];
  const pattern = /<!-- test: run -->\s*\n```sh\n([\s\S]*?)\n```/g;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) blocks.push(m[1] as string);
  return blocks;
}

/** A directory holding an `ephemeral-vault` script that runs the built CLI. */
function cliOnPath(): string {
  const dir = tempDir("ev-docs-bin-");
  const wrapper = join(dir, "ephemeral-vault");
  writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(wrapper, 0o755);
  return dir;
}

function bash(script: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("the docs' runnable examples", () => {
  afterEach(killChildren);
  afterAll(cleanupTemp);

  for (const page of ["orgs.md", "webhooks.md"]) {
    it(`${page}: every example block runs and exits 0`, async () => {
      const blocks = runnableBlocks(page);
      expect(blocks.length, `${page} has runnable examples`).toBeGreaterThan(0);
      const vault = await startVault(tempDir(), { env: { VAULT_WEBHOOK_ALLOW_PRIVATE: "true" } });
      const work = tempDir("ev-docs-cwd-");
      const env = childEnv({
        VAULT_ADDR: vault.url,
        VAULT_TOKEN: E2E_MASTER_KEY,
        PATH: `${cliOnPath()}${delimiter}${process.env.PATH ?? ""}`,
      });
      for (const [i, block] of blocks.entries()) {
        const result = await bash(block, env, work);
        expect(result.code, `${page} block ${i + 1} failed:\n${block}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`).toBe(0);
        expect(result.stderr, `${page} block ${i + 1} wrote to stderr`).toBe("");
      }
    });
  }
});

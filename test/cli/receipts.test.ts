import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * Receipts on the command line (docs/cli.md, "Receipts"), against a real
 * vault process: `share` prints the link alone on stdout and the receipt on
 * stderr; `status` and `destroy` need no token (VAULT_TOKEN unset, no
 * master.key near the working directory), only the address.
 */

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI; VAULT_ADDR is the vault's; VAULT_TOKEN only with `token`. */
function cli(args: string[], vault: VaultProcess, options: { input?: string; token?: boolean; env?: Record<string, string | undefined> } = {}): CliResult {
  const env = childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: options.token === true ? E2E_MASTER_KEY : undefined, ...options.env });
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, env, input: options.input ?? "", encoding: "utf8", timeout: 15_000, killSignal: "SIGKILL" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const RECEIPT_LINE = /^receipt: (vrc_[A-Za-z0-9_-]{54}) \(ephemeral-vault status \1 tells whether it was opened; destroy it with ephemeral-vault destroy \1\)\n$/;

/** Shares `value` with the CLI: the link (stdout) and the receipt (stderr). */
function share(vault: VaultProcess, value: string, extra: string[] = []): { link: string; receipt: string } {
  const shared = cli(["share", ...extra], vault, { input: value, token: true });
  expect(shared.code, shared.stderr).toBe(0);
  expect(shared.stdout).toMatch(/^https?:\/\/\S+\/s\/[0-9a-f]{64}#[A-Za-z0-9_-]{43}\n$/);
  const receipt = RECEIPT_LINE.exec(shared.stderr)?.[1];
  expect(receipt, shared.stderr).toBeDefined();
  return { link: shared.stdout.trim(), receipt: receipt as string };
}

describe("receipts on the command line", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("share: stdout is the link alone, stderr one receipt line; status says waiting, then opened 1 of 3 after a read", () => {
    const { link, receipt } = share(vault, "three reads", ["--reads", "3", "--ttl", "1h"]);
    const before = cli(["status", receipt], vault);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/^waiting: not opened yet, 0 of 3 reads; expires \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
    expect(before.stderr).toBe("");

    const read = cli(["get", link], vault);
    expect(read).toMatchObject({ code: 0, stdout: "three reads" });

    const after = cli(["status", receipt], vault);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/^opened 1 of 3 reads, last at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ; expires \d{4}-[^\n]+Z\n$/);
    const json = cli(["status", receipt, "--json"], vault);
    expect(json.code).toBe(0);
    const body = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(body).toEqual({ state: "opened", created_at: expect.any(Number), expires_at: expect.any(Number), max_reads: 3, read_count: 1, last_read_at: expect.any(Number) });
    expect(body.expires_at).toBe((body.created_at as number) + 3600);
  });

  it("status after the last read: burned at <time>", () => {
    const { link, receipt } = share(vault, "once");
    expect(cli(["get", link], vault).code).toBe(0);
    const status = cli(["status", receipt], vault);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^burned at \d{4}-[^\n]+Z \(1 of 1 reads\)\n$/);
  });

  it("destroy: prints destroyed, the link is gone, status says deleted; again: a clear line and exit 1", () => {
    const { link, receipt } = share(vault, "to destroy", ["--reads", "2"]);
    const destroyed = cli(["destroy", receipt], vault);
    expect(destroyed).toEqual({ code: 0, stdout: "destroyed\n", stderr: "" });
    const gone = cli(["get", link], vault);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/\(404\)/);
    expect(cli(["status", receipt], vault).stdout).toBe("deleted (0 of 2 reads)\n");
    const again = cli(["destroy", receipt], vault);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toBe("ephemeral-vault: nothing to destroy: the secret is already deleted (409)\n");
  });

  it("takes a receipt link as the address: no VAULT_ADDR needed", () => {
    const { receipt } = share(vault, "by link");
    const status = cli(["status", `${vault.url}/receipts/${receipt}`], vault, { env: { VAULT_ADDR: undefined } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^waiting/);
  });

  it("an unknown receipt exits 1 as a not-found get; a text that is no receipt exits 2; neither echoes it", () => {
    const unknown = `vrc_${"Q".repeat(54)}`;
    for (const command of ["status", "destroy"]) {
      const r = cli([command, unknown], vault);
      expect(r.code, command).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^ephemeral-vault: [^\n]*\(404\): no such receipt[^\n]*\n$/);
      expect(r.stderr).not.toContain(unknown);
      const bad = cli([command, "vrc_short"], vault);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/not a receipt/);
    }
  });
});

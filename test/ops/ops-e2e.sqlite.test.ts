import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { rootKeyId } from "../../src/crypto/cipher.js";
import { BIN, childEnv, cleanupTemp, killChildren, ROOT, runCommand, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * The operator commands against real processes: backup while clients write,
 * restore, rekey, and the data-dir lock.
 */

const KEY_A = "a1".repeat(32);
const KEY_B = "b2".repeat(32);

afterEach(killChildren);
afterAll(cleanupTemp);

/** A license lifting the 100-secret free tier, made with the command itself. */
function licenseEnv(): Record<string, string> {
  const file = join(tempDir(), "issuer.pem");
  const keygen = runCommand(["license", "keygen", "--private-key", file]);
  const publicKey = /VAULT_LICENSE_PUBLIC_KEY=(\S+)/.exec(keygen.stdout)?.[1] ?? "";
  const issued = runCommand(["license", "issue", "--private-key", file, "--subject", "ops-e2e"]);
  return { VAULT_LICENSE_PUBLIC_KEY: publicKey, VAULT_LICENSE_KEY: issued.stdout.trim() };
}

/** Runs the command without blocking the event loop (clients keep writing meanwhile). */
function runAsync(args: string[], env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

async function create(vault: VaultProcess, key: string, value: string): Promise<void> {
  const res = await vault.request("POST", "/secrets", { key, value });
  if (res.status !== 201) throw new Error(`POST /secrets ${key}: ${res.status} ${await res.text()}`);
}

describe("data-dir lock", () => {
  it("a second server on the same data dir exits 2 with a clear message; restore and rekey too; kill -9 frees it at once", async () => {
    const dir = tempDir();
    const env = { VAULT_ENCRYPTION_KEY: KEY_A };
    const first = await startVault(dir, { env });
    const second = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: "x".repeat(20), ...env });
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/another ephemeral-vault is using the data dir/);
    const backupFile = join(tempDir(), "b.db");
    expect(runCommand(["backup", backupFile, "--data-dir", dir], env).code).toBe(0);
    const restore = runCommand(["restore", backupFile, "--data-dir", dir], env);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toMatch(/another ephemeral-vault is using the data dir/);
    const rekey = runCommand(["rekey", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: KEY_B, VAULT_PREVIOUS_ENCRYPTION_KEYS: KEY_A });
    expect(rekey.code).toBe(2);
    expect(rekey.stderr).toMatch(/another ephemeral-vault is using the data dir/);

    await create(first, "survives", "kill-9");
    await first.stop("SIGKILL");
    const restarted = await startVault(dir, { env });
    const res = await restarted.request("GET", "/secrets/survives");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ value: "kill-9" });
  });
});

describe("backup and restore", () => {
  it("a backup taken while clients write restores to an intact database serving every secret acknowledged before it began", async () => {
    const dir = tempDir();
    const env = { VAULT_ENCRYPTION_KEY: KEY_A, ...licenseEnv() };
    const vault = await startVault(dir, { env });
    const expected = new Map<string, string>();
    const padding = "p".repeat(16_000);
    for (let i = 0; i < 160; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const value = `${padding}-${i + j}`;
          await create(vault, `fill/${i + j}`, value);
          expected.set(`fill/${i + j}`, value);
        }),
      );
    }

    let writing = true;
    let backupStarted = false;
    let duringBackup = 0;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        const key = `w${w}/${i}`;
        const startedBefore = !backupStarted;
        await create(vault, key, `value-${w}-${i}`);
        if (startedBefore && !backupStarted) expected.set(key, `value-${w}-${i}`);
        else duringBackup++;
      }
    };
    const writers = [0, 1, 2, 3].map(writer);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const file = join(tempDir(), "vault-backup.db");
    backupStarted = true;
    const backup = await runAsync(["backup", file, "--data-dir", dir], { VAULT_ENCRYPTION_KEY: KEY_A });
    writing = false;
    await Promise.all(writers);

    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(/integrity ok/);
    expect(backup.stdout).toMatch(/secrets: \d+ active/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(duringBackup).toBeGreaterThan(0);
    await vault.stop();

    const wrong = runCommand(["restore", file, "--data-dir", tempDir()], { VAULT_ENCRYPTION_KEY: KEY_B });
    expect(wrong.code).toBe(1);
    // The backup's MAC is checked first: it needs the root key the backup was made with.
    expect(wrong.stderr).toMatch(/restore refused: the backup's MAC was made with root key [0-9a-f]{16}, which is not loaded/);

    const target = tempDir();
    const restore = runCommand(["restore", file, "--data-dir", target], { VAULT_ENCRYPTION_KEY: KEY_A });
    expect(restore.stderr).toBe("");
    expect(restore.code).toBe(0);
    const check = new Database(join(target, "vault.db"), { readonly: true });
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    check.close();

    const restored = await startVault(target, { env });
    const keys = [...expected.keys()];
    for (let i = 0; i < keys.length; i += 20) {
      await Promise.all(
        keys.slice(i, i + 20).map(async (key) => {
          const res = await restored.request("GET", `/secrets/${key}`);
          expect(res.status, key).toBe(200);
          expect(((await res.json()) as { value: string }).value).toBe(expected.get(key));
        }),
      );
    }
  });
});

describe("rekey", () => {
  it("leaves no record under the old key; the vault then starts and serves every value with only the new key", async () => {
    const dir = tempDir();
    const first = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_A } });
    for (let i = 0; i < 12; i++) await create(first, `rk/${i}`, `rekey-value-${i}`);
    await first.stop();

    const tooEarly = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: "x".repeat(20), VAULT_ENCRYPTION_KEY: KEY_B });
    expect(tooEarly.code).toBe(2);

    const rekey = runCommand(["rekey", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: KEY_B, VAULT_PREVIOUS_ENCRYPTION_KEYS: KEY_A });
    expect(rekey.stderr).toBe("");
    expect(rekey.code).toBe(0);
    expect(rekey.stdout).toMatch(/12 values rewrapped/);
    expect(rekey.stdout).toMatch(/0 remaining under old keys/);

    const db = new Database(join(dir, "vault.db"), { readonly: true });
    const oldId = Buffer.from(rootKeyId(Buffer.from(KEY_A, "hex")), "hex");
    const underOld = db.prepare("SELECT count(*) AS n FROM secrets WHERE substr(ciphertext, 2, 8) = ?").get(oldId) as { n: number };
    const total = db.prepare("SELECT count(*) AS n FROM secrets WHERE ciphertext IS NOT NULL").get() as { n: number };
    db.close();
    expect(underOld.n).toBe(0);
    expect(total.n).toBe(12);

    const withOldOnly = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: "x".repeat(20), VAULT_ENCRYPTION_KEY: KEY_A });
    expect(withOldOnly.code).toBe(2);
    const vault = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_B } });
    for (let i = 0; i < 12; i++) {
      const res = await vault.request("GET", `/secrets/rk/${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ value: `rekey-value-${i}` });
    }
  });
});

describe("rekey of a generated encryption.key", () => {
  it("replaces the key file with the new key, keeps the old one beside it (0600), and a plain start reads every value", async () => {
    const dir = tempDir();
    const first = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: undefined } });
    for (let i = 0; i < 3; i++) await create(first, `gen/${i}`, `generated-${i}`);
    await first.stop();
    const keyFile = join(dir, "encryption.key");
    const oldKey = readFileSync(keyFile, "utf8").trim();
    expect(oldKey).toMatch(/^[0-9a-f]{64}$/);

    // docs/operations.md "Rotating the encryption key", literally.
    const rekey = runCommand(["rekey", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: KEY_B, VAULT_PREVIOUS_ENCRYPTION_KEYS: oldKey });
    expect(rekey.stderr).toBe("");
    expect(rekey.code).toBe(0);
    expect(readFileSync(keyFile, "utf8").trim()).toBe(KEY_B);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const kept = readdirSync(dir).filter((name) => name.startsWith("encryption.key.old"));
    expect(kept).toHaveLength(1);
    const oldFile = join(dir, kept[0] as string);
    expect(readFileSync(oldFile, "utf8").trim()).toBe(oldKey);
    expect(statSync(oldFile).mode & 0o777).toBe(0o600);
    expect(rekey.stdout).toContain(oldFile);
    // No temporary file left behind.
    expect(readdirSync(dir).filter((name) => name.includes(".tmp"))).toEqual([]);

    // A plain start: no VAULT_ENCRYPTION_KEY, the key file alone.
    const vault = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: undefined } });
    for (let i = 0; i < 3; i++) {
      const res = await vault.request("GET", `/secrets/gen/${i}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ value: `generated-${i}` });
    }
    await vault.stop();

    // A second rotation keeps the first old key too (no file is overwritten).
    const again = runCommand(["rekey", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: KEY_A, VAULT_PREVIOUS_ENCRYPTION_KEYS: KEY_B });
    expect(again.code).toBe(0);
    expect(readFileSync(keyFile, "utf8").trim()).toBe(KEY_A);
    expect(readdirSync(dir).filter((name) => name.startsWith("encryption.key.old"))).toHaveLength(2);
    expect(existsSync(oldFile)).toBe(true);
  });

  it("leaves encryption.key alone when it holds the key rekey runs with", async () => {
    const dir = tempDir();
    const first = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: undefined } });
    await create(first, "same/key", "same");
    await first.stop();
    const before = readFileSync(join(dir, "encryption.key"), "utf8");
    const rekey = runCommand(["rekey", "--data-dir", dir], { VAULT_ENCRYPTION_KEY: undefined });
    expect(rekey.code).toBe(0);
    expect(readFileSync(join(dir, "encryption.key"), "utf8")).toBe(before);
    expect(readdirSync(dir).filter((name) => name.startsWith("encryption.key."))).toEqual([]);
  });
});

import { spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { TEST_ENGINE } from "./helpers.js";
import { createTestDatabase } from "./pg-database.js";
import type { TestDatabase } from "./pg-database.js";

/** The package root, where bin/ and dist/ are. */
export const ROOT = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
/** The command the package installs; runs dist/cli.js (built by global-setup.ts). */
export const BIN = join(ROOT, "bin", "ephemeral-vault.js");
/** The master key the e2e servers run with (unless a test overrides it). */
export const E2E_MASTER_KEY = "e2e-master-key-0123456789abcdef";

/**
 * The environment of a child: the test process's own, without any VAULT_*
 * or PORT setting that could leak in from the developer's shell, plus `env`.
 */
export function childEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("VAULT_") || name === "PORT") continue;
    base[name] = value;
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete base[name];
    else base[name] = value;
  }
  return base;
}

/** A running `ephemeral-vault` child process. */
export interface VaultProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> from the "listening on" line. */
  url: string;
  /** Everything written so far, as text. */
  stdout: () => string;
  stderr: () => string;
  /** Sends an HTTP request with the master key (or `token`, null for none). */
  request: (method: string, path: string, body?: unknown, token?: string | null) => Promise<Response>;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends a signal and waits for the exit. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * The keys every PostgreSQL node of one database must share (config.ts refuses a
 * node without them); the master key is E2E_MASTER_KEY. Used in the `pg-matrix`
 * project only, where a test does not set them itself.
 */
export const E2E_PG_KEYS = {
  VAULT_ENCRYPTION_KEY: "e2".repeat(32),
  VAULT_WEBHOOK_SECRET: "e2e-pg-webhook-secret-0123456789",
} as const;

/**
 * On PostgreSQL (TEST_ENGINE "pg"), the database that stands for a data dir:
 * a test that restarts a vault on the same data dir (kill -9, then read)
 * gets the same database back. Keyed by the VAULT_DATA_DIR string.
 */
const databases = new Map<string, Promise<TestDatabase>>();
/** The same, once created: runCommand() is synchronous. */
const createdDatabases = new Map<string, TestDatabase>();

/**
 * On PostgreSQL, creates (once) the database that stands for `dataDir`, so a
 * later runCommand() with VAULT_DATA_DIR=`dataDir` runs on it as well; startVault()
 * does this by itself. Nothing on SQLite.
 */
export async function prepareEngine(dataDir: string): Promise<void> {
  if (TEST_ENGINE === "pg") await databaseFor(dataDir);
}

function databaseFor(dataDir: string): Promise<TestDatabase> {
  let db = databases.get(dataDir);
  if (db === undefined) {
    db = createTestDatabase().then((created) => {
      createdDatabases.set(dataDir, created);
      return created;
    });
    databases.set(dataDir, db);
  }
  return db;
}

/** The PostgreSQL connection URL standing for `dataDir` (TEST_ENGINE "pg", after startVault or prepareEngine). */
export function databaseUrlOf(dataDir: string): string {
  const db = createdDatabases.get(dataDir);
  if (db === undefined) throw new Error(`no database for the data dir ${dataDir}`);
  return db.url;
}

/** The environment that puts a child on PostgreSQL: its data dir's database and the shared keys. */
function pgEnv(db: TestDatabase): Record<string, string> {
  return { VAULT_DATABASE_URL: db.url, ...E2E_PG_KEYS };
}

if (TEST_ENGINE === "pg") {
  afterAll(async () => {
    await killChildren();
    const all = await Promise.allSettled([...databases.values()]);
    databases.clear();
    createdDatabases.clear();
    for (const db of all) if (db.status === "fulfilled") await db.value.drop();
  });
}

/** Children started by startVault(); killChildren() ends any still alive. */
const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** A fresh temporary directory, removed by cleanupTemp(). */
export function tempDir(prefix = "ev-e2e-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/** SIGKILLs every child still running. Call in afterEach. */
export async function killChildren(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      waits.push(new Promise((resolve) => child.once("exit", resolve)));
      child.kill("SIGKILL");
    }
  }
  children.clear();
  await Promise.all(waits);
}

/** Removes the temporary directories made by tempDir(). Call in afterAll. */
export function cleanupTemp(): void {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

export interface StartOptions {
  /** Extra environment (undefined removes a variable). VAULT_MASTER_KEY defaults to E2E_MASTER_KEY. */
  env?: Record<string, string | undefined>;
  /** Extra command-line arguments after `--port 0`. */
  args?: string[];
  /** Give up waiting for "listening on" after this many ms. */
  timeoutMs?: number;
}

/**
 * Spawns `node bin/ephemeral-vault.js --port 0` with VAULT_DATA_DIR=`dataDir`
 * and waits for the "listening on http://..." line on stderr.
 * On PostgreSQL (the `pg-matrix` project, TEST_ENGINE "pg") the child also gets
 * VAULT_DATABASE_URL of the database standing for `dataDir` (created on first
 * use, the same one on a restart) and the shared keys E2E_PG_KEYS; what
 * `options.env` names (even as undefined) wins over both.
 * @throws when the process exits or stays silent before listening (the
 *   error carries its stderr).
 */
export async function startVault(dataDir: string, options: StartOptions = {}): Promise<VaultProcess> {
  const engineEnv = TEST_ENGINE === "pg" ? pgEnv(await databaseFor(dataDir)) : {};
  const env = childEnv({
    VAULT_DATA_DIR: dataDir,
    VAULT_MASTER_KEY: E2E_MASTER_KEY,
    VAULT_LOG_LEVEL: "warn",
    ...engineEnv,
    ...options.env,
  });
  const child = spawn(process.execPath, [BIN, "--port", "0", ...(options.args ?? [])], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => (out += s));
  child.stderr?.setEncoding("utf8").on("data", (s: string) => (err += s));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`the vault did not start within ${options.timeoutMs ?? 15_000} ms; stderr:\n${err}`));
    }, options.timeoutMs ?? 15_000);
    const onData = () => {
      const m = /listening on (https?:\/\/\S+)/.exec(err);
      if (m) {
        cleanup();
        resolve(m[1] as string);
      }
    };
    const onExit = (code: number | null) => {
      cleanup();
      reject(Object.assign(new Error(`the vault exited with ${code} before listening; stderr:\n${err}`), { code, stderr: err }));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
    };
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });

  const request = (method: string, path: string, body?: unknown, token: string | null = env.VAULT_MASTER_KEY ?? E2E_MASTER_KEY) => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    return fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  };
  return {
    child,
    url,
    stdout: () => out,
    stderr: () => err,
    request,
    exited,
    stop: (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** The result of running the command to completion. */
export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time, milliseconds. */
  ms: number;
}

/**
 * Runs `node bin/ephemeral-vault.js ...args` to completion (for commands that
 * end: --help, --version, license, a refused start). Killed after `timeoutMs`.
 * On PostgreSQL, when `env` names a VAULT_DATA_DIR that startVault() or
 * prepareEngine() gave a database, the command runs on that database with the
 * shared keys, as startVault() does (what `env` names wins).
 */
export function runCommand(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 15_000): CommandResult {
  const started = performance.now();
  const db = TEST_ENGINE === "pg" && env.VAULT_DATA_DIR !== undefined ? createdDatabases.get(env.VAULT_DATA_DIR) : undefined;
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv(db === undefined ? env : { ...pgEnv(db), ...env }),
    encoding: "utf8",
    timeout: timeoutMs,
    killSignal: "SIGKILL",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, ms: performance.now() - started };
}

/** What a finished command printed, and its exit code. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built command to completion against `vault` (VAULT_ADDR and the
 * master key set; `env` adds or, with undefined, removes variables), with
 * stdin empty and a 15 s limit.
 */
export function cliAgainst(vault: VaultProcess, args: string[], env: Record<string, string | undefined> = {}): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: childEnv({ VAULT_ADDR: vault.url, VAULT_TOKEN: E2E_MASTER_KEY, ...env }),
    input: "",
    encoding: "utf8",
    timeout: 15_000,
    killSignal: "SIGKILL",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

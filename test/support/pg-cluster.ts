import { execFile, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** A running throwaway PostgreSQL cluster, owned by the test run. */
export interface PgCluster {
  /** `postgres://vault_test:PASSWORD@127.0.0.1:PORT/postgres`: the superuser on the maintenance database. */
  adminUrl: string;
  /** The TCP port on 127.0.0.1. */
  port: number;
  /** The temporary directory holding the data directory, the unix socket and the server log. */
  dir: string;
  /** Wall-clock milliseconds that initdb plus the start took. */
  startMs: number;
  /**
   * Stops the server (fast shutdown: every connection is cut), waits `downMs` milliseconds
   * (default 0) with nothing listening, then starts it again on the same port and data
   * directory: a failover or a restart as a client sees it. Throws when the start fails.
   */
  restart(downMs?: number): Promise<void>;
  /** Stops the server (fast shutdown) and removes `dir`. Idempotent; never throws. */
  stop(): Promise<void>;
}

/** Where the server binaries are and whom they run as; `reason` says why not when they cannot run. */
export type PgAvailability =
  | { ok: true; bin: string; user: string | null }
  | { ok: false; reason: string };

const SUPERUSER = "vault_test";

const runnable = (dir: string): boolean => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"));

const versionOf = (dir: string): number[] =>
  (/postgresql\/([\d.]+)\/bin$/.exec(dir)?.[1] ?? "0").split(".").map(Number);

const newerFirst = (a: string, b: string): number => {
  const va = versionOf(a);
  const vb = versionOf(b);
  for (let i = 0; i < Math.max(va.length, vb.length); i++) {
    const d = (vb[i] ?? 0) - (va[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
};

/**
 * The directory holding PostgreSQL's `initdb` and `pg_ctl`, or null. Looked up in this order:
 * `VAULT_PG_BIN` (set by .ci/run), `pg_config --bindir`, the newest major version under
 * /usr/lib/postgresql/{version}/bin (Debian, Ubuntu), then `initdb` on the PATH.
 */
export function findPgBin(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.VAULT_PG_BIN) return runnable(env.VAULT_PG_BIN) ? env.VAULT_PG_BIN : null;
  const fromConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (fromConfig.status === 0) {
    const dir = fromConfig.stdout.trim();
    if (dir && runnable(dir)) return dir;
  }
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const dirs = readdirSync(debian)
      .map((v) => join(debian, v, "bin"))
      .filter(runnable)
      .sort(newerFirst);
    if (dirs[0]) return dirs[0];
  }
  for (const dir of (env.PATH ?? "").split(":")) if (dir && runnable(dir)) return dir;
  return null;
}

/**
 * Whether a throwaway cluster can be started here. initdb refuses to run as root, so under
 * root the server runs as `VAULT_PG_USER` (default `postgres`, the system user Debian's
 * package creates) through `runuser`; `user` is null when the tests already run as non-root.
 */
export function pgAvailability(env: NodeJS.ProcessEnv = process.env): PgAvailability {
  const bin = findPgBin(env);
  if (!bin) {
    return {
      ok: false,
      reason:
        "no PostgreSQL server binaries (initdb, pg_ctl) found: install PostgreSQL (Debian: apt-get install postgresql) or set VAULT_PG_BIN",
    };
  }
  if (process.getuid?.() !== 0) return { ok: true, bin, user: null };
  const user = env.VAULT_PG_USER ?? "postgres";
  if (spawnSync("id", ["-u", user]).status !== 0) {
    return { ok: false, reason: `running as root and there is no user "${user}" to run PostgreSQL as (initdb refuses root): create it or set VAULT_PG_USER` };
  }
  if (spawnSync("runuser", ["--help"]).error) return { ok: false, reason: "running as root and runuser is missing" };
  return { ok: true, bin, user };
}

/** A free TCP port on 127.0.0.1 (listened on once, then closed). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

const idOf = (flag: "-u" | "-g", user: string): number => Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());

/**
 * Starts a throwaway cluster: `initdb` into a fresh temp directory (superuser `vault_test`
 * with a random password, scram-sha-256 on TCP, trust on the unix socket in that 0700
 * directory), then `pg_ctl start` listening on 127.0.0.1 only, on a free port, with fsync and
 * synchronous_commit at their defaults (on). Runs as `availability.user` when given.
 * Throws when initdb or the start fails (the server log is in the message); nothing is left behind.
 */
export async function startPgCluster(availability: { bin: string; user: string | null }): Promise<PgCluster> {
  const started = Date.now();
  const { bin, user } = availability;
  const dir = mkdtempSync(join(tmpdir(), "vault-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const exec = (tool: string, args: string[]): ReturnType<typeof spawnSync> => {
    const [cmd, argv] = user ? ["runuser", ["-u", user, "--", join(bin, tool), ...args]] : [join(bin, tool), args];
    return spawnSync(cmd, argv, { cwd: dir, encoding: "utf8" });
  };
  const serverLog = (): string => (existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-20).join("\n") : "");
  const run = (tool: string, args: string[]): void => {
    const r = exec(tool, args);
    if (r.status !== 0) {
      throw new Error(`${tool} failed (${r.error?.message ?? `exit ${r.status}`}): ${String(r.stderr).trim()}\n${serverLog()}`);
    }
  };
  let live = false;
  const stop = async (): Promise<void> => {
    if (live) {
      const fast = exec("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "20"]);
      if (fast.status !== 0) exec("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w"]);
      live = false;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (user) chownSync(dir, idOf("-u", user), idOf("-g", user));
    const password = randomBytes(18).toString("base64url");
    const pwfile = join(dir, "pwfile");
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (user) chownSync(pwfile, idOf("-u", user), idOf("-g", user));
    run("initdb", [
      "-D", data, "-U", SUPERUSER, `--pwfile=${pwfile}`, "--auth-local=trust", "--auth-host=scram-sha-256",
      "--encoding=UTF8", "--locale=C",
    ]);
    rmSync(pwfile);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      appendFileSync(
        join(data, "postgresql.conf"),
        `\nlisten_addresses = '127.0.0.1'\nport = ${port}\nunix_socket_directories = '${dir}'\nfsync = on\nsynchronous_commit = on\nmax_connections = 400\n`,
      );
      try {
        run("pg_ctl", ["start", "-D", data, "-l", log, "-w", "-t", "30"]);
      } catch (error) {
        if (attempt < 3 && /already in use|could not bind/i.test(serverLog())) continue;
        throw error;
      }
      live = true;
      // Asynchronous, so the test's own load keeps running while the server is down.
      const runAsync = (tool: string, args: string[]): Promise<void> =>
        new Promise((resolve, reject) => {
          const [cmd, argv] = user ? ["runuser", ["-u", user, "--", join(bin, tool), ...args]] : [join(bin, tool), args];
          execFile(cmd, argv, { cwd: dir, encoding: "utf8" }, (error, _stdout, stderr) => {
            if (error) reject(new Error(`${tool} failed (${error.message}): ${String(stderr).trim()}\n${serverLog()}`));
            else resolve();
          });
        });
      const restart = async (downMs = 0): Promise<void> => {
        await runAsync("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "20"]);
        live = false;
        await new Promise((resolve) => setTimeout(resolve, downMs));
        await runAsync("pg_ctl", ["start", "-D", data, "-l", log, "-w", "-t", "30"]);
        live = true;
      };
      const adminUrl = `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`;
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      return { adminUrl, port, dir, startMs: Date.now() - started, restart, stop };
    }
  } catch (error) {
    await stop();
    throw error;
  }
}

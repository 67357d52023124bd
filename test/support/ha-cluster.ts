import { execFileSync, spawn, spawnSync } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { findPgBin, freePort } from "./pg-cluster.js";

// The recommended PostgreSQL HA topology of docs/scaling.md ("High availability"), on loopback,
// from Debian's packages: etcd (the DCS), two PostgreSQL members under Patroni with
// synchronous_mode, and HAProxy routing to the leader by Patroni's REST check (GET /primary).
// The tests start it, kill its leader, switch it over and stop it (test/ha/).

/** What must be installed for the topology, and why not when it cannot run. */
export type HaAvailability = { ok: true; pgBin: string; user: string | null } | { ok: false; reason: string };

const TOOLS = ["etcd", "patroni", "patronictl", "haproxy"] as const;

const onPath = (tool: string): boolean => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0;

/**
 * Whether the HA topology can start here: etcd (Debian `etcd-server`), patroni, patronictl and
 * haproxy on the PATH, PostgreSQL's server binaries (findPgBin), and, under root, the `postgres`
 * user to run PostgreSQL as (Patroni runs it; initdb refuses root).
 */
export function haAvailability(env: NodeJS.ProcessEnv = process.env): HaAvailability {
  const missing = TOOLS.filter((t) => !onPath(t));
  if (missing.length > 0) return { ok: false, reason: `missing ${missing.join(", ")} (Debian: apt-get install etcd-server patroni haproxy)` };
  const pgBin = findPgBin(env);
  if (pgBin === null) return { ok: false, reason: "no PostgreSQL server binaries (Debian: apt-get install postgresql)" };
  if (process.getuid?.() !== 0) return { ok: true, pgBin, user: null };
  const user = env.VAULT_PG_USER ?? "postgres";
  if (spawnSync("id", ["-u", user]).status !== 0) return { ok: false, reason: `running as root and there is no user "${user}" to run PostgreSQL as` };
  return { ok: true, pgBin, user };
}

/** One PostgreSQL member under Patroni. */
export interface HaMember {
  name: string;
  /** PostgreSQL's port on 127.0.0.1. */
  pgPort: number;
  /** Patroni's REST API port on 127.0.0.1. */
  apiPort: number;
  /** The member's Patroni configuration file. */
  config: string;
  dataDir: string;
}

/** The running topology. */
export interface HaCluster {
  /** `postgres://vault:PASSWORD@127.0.0.1:<haproxy port>/vault`: what the vault nodes use. */
  url: string;
  members: HaMember[];
  dir: string;
  /** The member holding the leader key, by Patroni's REST API, or undefined while there is none. */
  leader(): Promise<string | undefined>;
  /** Resolves once a leader that accepts writes is reached through HAProxy; rejects after `ms`. */
  waitWritable(ms?: number): Promise<void>;
  /** Resolves once `name` runs again as a replica streaming from the leader (sync standby); rejects after `ms`. */
  waitSyncStandby(name: string, ms?: number): Promise<void>;
  /** SIGKILL of the member's Patroni and its PostgreSQL postmaster: a node lost whole. */
  kill(name: string): void;
  /** Starts the member's Patroni again (it rejoins, rewound, as a replica). */
  start(name: string): void;
  /** `patronictl switchover` from the current leader to the other member; resolves when patronictl returns. */
  switchover(): Promise<{ from: string; to: string }>;
  /** Stops everything and removes `dir`. Never throws. */
  stop(): Promise<void>;
}

/** SIGKILL to every process whose command line contains `needle` (read from /proc: no procps needed). */
function killMatching(needle: string): void {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ");
    } catch {
      continue; // gone meanwhile
    }
    if (!cmdline.includes(needle)) continue;
    try {
      process.kill(Number(entry), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 100 ms until true; rejects with `what` (made when it gives up: a log's tail then) after `ms` milliseconds. */
async function until(what: string | (() => string), ms: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${typeof what === "string" ? what : what()}: not within ${ms} ms`);
}

const PASSWORDS = { superuser: "ha-superuser-pass", replication: "ha-replication-pass", vault: "ha-vault-pass" };

/** One member's Patroni YAML (JSON is YAML). Failover in about 10 s (ttl), checks every second. */
function patroniConfig(m: HaMember, etcdPort: number, pgBin: string, dir: string, scope: string): string {
  return JSON.stringify({
    scope,
    name: m.name,
    restapi: { listen: `127.0.0.1:${m.apiPort}`, connect_address: `127.0.0.1:${m.apiPort}` },
    etcd3: { hosts: `127.0.0.1:${etcdPort}` },
    bootstrap: {
      dcs: {
        ttl: 10,
        loop_wait: 1,
        retry_timeout: 4,
        maximum_lag_on_failover: 1048576,
        synchronous_mode: true,
        postgresql: { use_pg_rewind: true, parameters: { wal_level: "replica", hot_standby: "on", wal_log_hints: "on", max_wal_senders: 10, max_replication_slots: 10 } },
      },
      initdb: [{ encoding: "UTF8" }, { "auth-local": "trust" }],
      pg_hba: ["local all all trust", "host replication replicator 127.0.0.1/32 scram-sha-256", "host all all 127.0.0.1/32 scram-sha-256"],
    },
    postgresql: {
      listen: `127.0.0.1:${m.pgPort}`,
      connect_address: `127.0.0.1:${m.pgPort}`,
      data_dir: m.dataDir,
      bin_dir: pgBin,
      pgpass: join(dir, `pgpass-${m.name}`),
      authentication: {
        replication: { username: "replicator", password: PASSWORDS.replication },
        superuser: { username: "postgres", password: PASSWORDS.superuser },
        rewind: { username: "postgres", password: PASSWORDS.superuser },
      },
      parameters: { unix_socket_directories: dir, max_connections: 100 },
    },
  });
}

/** HAProxy: the leader only (Patroni answers GET /primary 200 on it), sessions to a member marked down cut at once. */
function haproxyConfig(port: number, members: HaMember[]): string {
  return [
    "global",
    "    maxconn 400",
    "defaults",
    "    mode tcp",
    "    timeout connect 2s",
    "    timeout client 30m",
    "    timeout server 30m",
    "    timeout check 1s",
    "listen primary",
    `    bind 127.0.0.1:${port}`,
    "    option httpchk GET /primary",
    "    http-check expect status 200",
    "    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions",
    ...members.map((m) => `    server ${m.name} 127.0.0.1:${m.pgPort} maxconn 150 check port ${m.apiPort}`),
    "",
  ].join("\n");
}

/**
 * Starts etcd, two Patroni members (the first bootstraps and leads, the second joins as the
 * synchronous standby), HAProxy in front, and creates the `vault` role and database. Every
 * file lives in a fresh temp directory owned by the PostgreSQL user. Takes about 15 s.
 * @throws when a part does not come up (its log's tail in the message); what started is stopped.
 */
export async function startHaCluster(availability: { pgBin: string; user: string | null }): Promise<HaCluster> {
  const { pgBin, user } = availability;
  const dir = mkdtempSync(join(tmpdir(), "vault-ha-"));
  const scope = `vault-ha-${process.pid}`;
  const procs = new Map<string, ChildProcess>();
  const asUser = (cmd: string, args: string[]): [string, string[]] => (user ? ["runuser", ["-u", user, "--", cmd, ...args]] : [cmd, args]);
  const launch = (label: string, cmd: string, args: string[]): void => {
    const [c, a] = asUser(cmd, args);
    const log = join(dir, `${label}.log`);
    const out = spawn("sh", ["-c", `exec "$0" "$@" >>'${log}' 2>&1`, c, ...a], { stdio: "ignore", detached: false });
    procs.set(label, out);
  };
  const tail = (label: string): string => {
    const log = join(dir, `${label}.log`);
    return existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-15).join("\n") : "";
  };
  if (user) {
    const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  const [etcdClient, etcdPeer, haPort] = [await freePort(), await freePort(), await freePort()];
  const members: HaMember[] = [];
  for (const name of ["pg1", "pg2"]) {
    const m: HaMember = { name, pgPort: await freePort(), apiPort: await freePort(), config: join(dir, `${name}.yml`), dataDir: join(dir, name) };
    writeFileSync(m.config, patroniConfig(m, etcdClient, pgBin, dir, scope));
    members.push(m);
  }
  const haproxyFile = join(dir, "haproxy.cfg");
  writeFileSync(haproxyFile, haproxyConfig(haPort, members));
  if (user) {
    const uid = Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", user], { encoding: "utf8" }).trim());
    for (const f of [...members.map((m) => m.config), haproxyFile]) chownSync(f, uid, gid);
    mkdirSync(join(dir, "etcd"), { mode: 0o700 });
    chownSync(join(dir, "etcd"), uid, gid);
  }

  const memberOf = (name: string): HaMember => {
    const m = members.find((x) => x.name === name);
    if (m === undefined) throw new Error(`no member ${name}`);
    return m;
  };
  const role = async (m: HaMember): Promise<string | undefined> => {
    const res = await fetch(`http://127.0.0.1:${m.apiPort}/patroni`, { signal: AbortSignal.timeout(1000) });
    return ((await res.json()) as { role?: string }).role;
  };
  const leader = async (): Promise<string | undefined> => {
    for (const m of members) {
      const ok = await fetch(`http://127.0.0.1:${m.apiPort}/primary`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return m.name;
    }
    return undefined;
  };
  const superUrl = `postgres://postgres:${PASSWORDS.superuser}@127.0.0.1:${haPort}/postgres`;
  const writable = async (): Promise<boolean> => {
    const c = new pg.Client({ connectionString: superUrl, connectionTimeoutMillis: 1000 });
    // A connection HAProxy cuts (a member marked down) must fail this check, not the process.
    c.on("error", () => {});
    try {
      await c.connect();
      const r = await c.query<{ ro: boolean }>("SELECT pg_is_in_recovery() AS ro");
      return r.rows[0]?.ro === false;
    } finally {
      await c.end().catch(() => {});
    }
  };
  const kill = (name: string): void => {
    const m = memberOf(name);
    killMatching(`patroni ${m.config}`);
    const pidFile = join(m.dataDir, "postmaster.pid");
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
      if (pid > 0) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
  };
  const stop = async (): Promise<void> => {
    for (const m of members) kill(m.name);
    killMatching(`haproxy -f ${haproxyFile}`);
    killMatching(`etcd --name ${scope}`);
    for (const p of procs.values()) p.kill("SIGKILL");
    // The backends notice their postmaster's death within a moment; then the directory can go.
    await sleep(500);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    launch("etcd", "etcd", [
      "--name",
      scope,
      "--data-dir",
      join(dir, "etcd"),
      "--listen-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--advertise-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--listen-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster",
      `${scope}=http://127.0.0.1:${etcdPeer}`,
    ]);
    await until(() => `etcd\n${tail("etcd")}`, 20_000, async () => (await fetch(`http://127.0.0.1:${etcdClient}/version`)).ok);
    launch("pg1", "patroni", [memberOf("pg1").config]);
    await until(() => `pg1 leading\n${tail("pg1")}`, 120_000, async () => (await role(memberOf("pg1"))) === "master" || (await role(memberOf("pg1"))) === "primary");
    launch("pg2", "patroni", [memberOf("pg2").config]);
    launch("haproxy", "haproxy", ["-f", haproxyFile, "-db"]);
    // Both members checked: HAProxy routes to pg1 alone, and pg2 streams from it.
    await until(() => `pg2 as sync standby\n${tail("pg2")}`, 90_000, async () => (await fetch(`http://127.0.0.1:${memberOf("pg2").apiPort}/sync`)).status === 200);
    await until(() => `writable through HAProxy\n${tail("haproxy")}`, 20_000, writable);
    await until("the vault role and database", 20_000, async () => {
      const admin = new pg.Client({ connectionString: superUrl });
      admin.on("error", () => {});
      try {
        await admin.connect();
        const exists = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = 'vault'");
        if (exists.rowCount === 0) await admin.query(`CREATE ROLE vault LOGIN PASSWORD '${PASSWORDS.vault}'`);
        const db = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'vault'");
        if (db.rowCount === 0) await admin.query("CREATE DATABASE vault OWNER vault");
        return true;
      } finally {
        await admin.end().catch(() => {});
      }
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const cluster: HaCluster = {
    url: `postgres://vault:${PASSWORDS.vault}@127.0.0.1:${haPort}/vault`,
    members,
    dir,
    leader,
    waitWritable: (ms = 60_000) => until("a writable leader through HAProxy", ms, writable),
    waitSyncStandby: (name, ms = 90_000) =>
      until(() => `${name} as sync standby\n${tail(name)}`, ms, async () => {
        const res = await fetch(`http://127.0.0.1:${memberOf(name).apiPort}/sync`, { signal: AbortSignal.timeout(1000) });
        return res.status === 200;
      }),
    kill,
    start: (name) => launch(name, "patroni", [memberOf(name).config]),
    switchover: async () => {
      const from = await leader();
      const to = members.find((m) => m.name !== from)?.name;
      if (from === undefined || to === undefined) throw new Error("no leader to switch over from");
      const [c, a] = asUser("patronictl", ["-c", memberOf(from).config, "switchover", scope, "--leader", from, "--candidate", to, "--force"]);
      const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const p = spawn(c, a, { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        p.stdout?.on("data", (d: Buffer) => (out += d.toString()));
        p.stderr?.on("data", (d: Buffer) => (out += d.toString()));
        p.on("exit", (code) => resolve({ code, out }));
      });
      if (r.code !== 0) throw new Error(`patronictl switchover failed (${r.code}): ${r.out}`);
      return { from, to };
    },
    stop,
  };
  return cluster;
}

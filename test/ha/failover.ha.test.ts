import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLicenseKeyPair, issueLicense } from "../../src/crypto/license.js";
import { BIN, ROOT, childEnv, cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { haAvailability, startHaCluster } from "../support/ha-cluster.js";
import type { HaCluster } from "../support/ha-cluster.js";
import { makeCertificate, startReceiver } from "../support/webhook-receiver.js";
import type { Receiver } from "../support/webhook-receiver.js";

// The recommended HA topology (docs/scaling.md, "High availability"): etcd, two PostgreSQL members
// under Patroni in synchronous mode, HAProxy to the leader, two vault nodes. Under load (creates,
// one-read reads through the other node, replaces, webhook deliveries) the leader's Patroni and
// PostgreSQL are killed with SIGKILL, and a planned switchover is made; each client request carries
// an Idempotency-Key and is retried on 503 or a cut connection with it, as the clients do
// (docs/api.md, "Retries"). VAULT_HA_ROUNDS=5 runs five of each and prints the figures of
// docs/scaling.md; VAULT_HA_RETRY_MS sets the nodes' VAULT_DATABASE_RETRY_MS.

const availability = haAvailability();
const ROUNDS = Number(process.env.VAULT_HA_ROUNDS ?? "1");
const KEYS = { VAULT_ENCRYPTION_KEY: "44".repeat(32), VAULT_WEBHOOK_SECRET: "ha-webhook-secret-0123456789abcdef" };

/** In CI the topology must run (.ci/run installs it): a missing part fails there, elsewhere it skips. */
function describeHa(name: string, fn: () => void): void {
  if (availability.ok || process.env.CI === "true") describe(name, fn);
  else describe.skip(`${name} (skipped: ${availability.reason})`, fn);
}

/** What one round's load saw. */
interface Tally {
  /** Answers by status, retried attempts included. */
  statuses: Map<number, number>;
  /** Attempts that got no answer (a connection cut or refused). */
  noAnswer: number;
  /** Calls that were retried at least once (503 or no answer first). */
  retriedCalls: number;
  /** Calls that gave up (still 503 or no answer after the retries): failed requests as a client sees them. */
  gaveUp: number;
  /** Acknowledged creates: key -> value. */
  created: Map<string, string>;
  /** One-read secrets whose value a read served (not a replay), and how many times. */
  served: Map<string, number>;
  /** One-read secrets whose read came back 404 after a 503: a value lost across the failover. */
  lost: string[];
  /** Replaced keys: the last acknowledged value, and the one in flight when the load stopped (if any). */
  replaced: Map<string, { acked: string; pending?: string }>;
  /** Wall-clock ms of every successful answer, for the longest gap (unavailability). */
  okAt: number[];
  /** The CLI's `get` of one-read secrets: printed the value (exit 0), said "not found" (a value lost), or failed otherwise. */
  cli: { printed: number; lost: string[]; failed: string[]; spans: [number, number][] };
}

const newTally = (): Tally => ({
  statuses: new Map(),
  noAnswer: 0,
  retriedCalls: 0,
  gaveUp: 0,
  created: new Map(),
  served: new Map(),
  lost: [],
  replaced: new Map(),
  okAt: [],
  cli: { printed: 0, lost: [], failed: [], spans: [] },
});

/** `ephemeral-vault get KEY` against `node` (the CLI's own retries with Idempotency-Key: docs/cli.md). */
function cliGet(node: VaultProcess, key: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, "get", key], {
      cwd: ROOT,
      env: childEnv({ VAULT_ADDR: node.url, VAULT_TOKEN: process.env.HA_MASTER_KEY }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * One call with an Idempotency-Key, retried on 503 or a cut connection with the same key every
 * 200 ms for up to 40 s (the failover takes about 10 s): the answer that finally came, or
 * undefined when it gave up.
 */
async function call(
  tally: Tally,
  node: VaultProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown>; replayed: boolean } | undefined> {
  const key = randomBytes(16).toString("base64url");
  const headers: Record<string, string> = { authorization: `Bearer ${process.env.HA_MASTER_KEY}`, "idempotency-key": key };
  if (body !== undefined) headers["content-type"] = "application/json";
  const end = Date.now() + 40_000;
  let retried = false;
  for (;;) {
    try {
      const res = await fetch(node.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      tally.statuses.set(res.status, (tally.statuses.get(res.status) ?? 0) + 1);
      if (res.status !== 503) {
        if (res.status < 300) tally.okAt.push(Date.now());
        if (retried) tally.retriedCalls++;
        return { status: res.status, json: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>), replayed: res.headers.get("idempotent-replayed") === "true" };
      }
    } catch {
      tally.noAnswer++;
    }
    retried = true;
    if (Date.now() > end) {
      tally.gaveUp++;
      return undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The load of one round, on both nodes, until stop(). */
function startLoad(nodes: [VaultProcess, VaultProcess], round: string): { tally: Tally; cliReading: Promise<void>; stop: () => Promise<void> } {
  const tally = newTally();
  let cliStarted = () => {};
  const cliReading = new Promise<void>((resolve) => {
    cliStarted = resolve;
  });
  let running = true;
  let n = 0;
  const burner = async (w: number) => {
    while (running) {
      const i = n++;
      const key = `${round}/once-${w}-${i}`;
      const value = `one read of ${key}`;
      const made = await call(tally, nodes[i % 2] as VaultProcess, "POST", "/secrets", { key, value, max_reads: 1 });
      if (made?.status !== 201) continue;
      tally.created.set(key, value);
      // Read through the other node: the read that burns it.
      const read = await call(tally, nodes[(i + 1) % 2] as VaultProcess, "GET", `/secrets/${key}`);
      if (read?.status === 200) {
        expect(read.json.value).toBe(value);
        if (!read.replayed) tally.served.set(key, (tally.served.get(key) ?? 0) + 1);
        else tally.served.set(key, tally.served.get(key) ?? 1);
      } else if (read?.status === 404) tally.lost.push(key);
    }
  };
  const replacer = async (w: number) => {
    const key = `${round}/replaced-${w}`;
    for (let i = 0; running; i++) {
      const value = `version ${i}`;
      const entry = tally.replaced.get(key);
      if (entry !== undefined) entry.pending = value;
      const res = await call(tally, nodes[i % 2] as VaultProcess, "PUT", `/secrets/${key}`, { value });
      if (res?.status === 200 || res?.status === 201) tally.replaced.set(key, { acked: value });
    }
  };
  // One-read secrets made up front, then read by the CLI's `get` through the other node one after
  // the other, so that gets are in flight while the database fails over.
  const cliReader = async () => {
    const made: [string, string][] = [];
    for (let i = 0; i < 30 && running; i++) {
      const key = `${round}/cli-${i}`;
      const value = `read by the CLI: ${key}`;
      if ((await call(tally, nodes[i % 2] as VaultProcess, "POST", "/secrets", { key, value, max_reads: 1 }))?.status === 201) made.push([key, value]);
    }
    cliStarted();
    for (const [i, [key, value]] of made.entries()) {
      if (!running) break;
      const started = Date.now();
      const got = await cliGet(nodes[(i + 1) % 2] as VaultProcess, key);
      tally.cli.spans.push([started, Date.now()]);
      if (got.code === 0 && got.stdout === value) tally.cli.printed++;
      else if (/not found/.test(got.stderr)) tally.cli.lost.push(key);
      else tally.cli.failed.push(`${key}: exit ${got.code}: ${got.stderr.trim()}`);
    }
  };
  const loops = [burner(0), burner(1), burner(2), burner(3), replacer(0), replacer(1), cliReader()];
  return {
    tally,
    cliReading,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The longest stretch without a successful answer between `from` and `to` (ms since the epoch). */
function longestGap(okAt: number[], from: number, to: number): number {
  const times = okAt.filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let gap = 0;
  let last = from;
  for (const t of [...times, to]) {
    gap = Math.max(gap, t - last);
    last = t;
  }
  return gap;
}

describeHa("the HA topology: Patroni, etcd, HAProxy, two vault nodes", () => {
  let cluster: HaCluster;
  let nodes: [VaultProcess, VaultProcess];
  let receiver: Receiver;
  const figures: string[] = [];

  beforeAll(async () => {
    if (!availability.ok) throw new Error(`the HA topology cannot run: ${availability.reason}`);
    cluster = await startHaCluster(availability);
    const cert = await makeCertificate();
    const caFile = join(tempDir("ev-ha-ca-"), "ca.pem");
    writeFileSync(caFile, cert.cert);
    receiver = await startReceiver(cert);
    const pair = generateLicenseKeyPair();
    const master = `ha-master-${randomBytes(8).toString("hex")}`;
    process.env.HA_MASTER_KEY = master;
    const env = {
      ...KEYS,
      VAULT_MASTER_KEY: master,
      VAULT_DATABASE_URL: cluster.url,
      VAULT_DATABASE_POOL_SIZE: "8",
      VAULT_WEBHOOK_ALLOW_PRIVATE: "true",
      VAULT_WEBHOOK_RETRY_BASE_MS: "200",
      NODE_EXTRA_CA_CERTS: caFile,
      VAULT_LICENSE_PUBLIC_KEY: pair.publicKeyBase64,
      VAULT_LICENSE_KEY: issueLicense(pair.privateKeyPem, "ha", null, Date.now()),
      // VAULT_HA_RETRY_MS=0 measures the nodes without holding and retrying (docs/scaling.md's "before").
      ...(process.env.VAULT_HA_RETRY_MS === undefined ? {} : { VAULT_DATABASE_RETRY_MS: process.env.VAULT_HA_RETRY_MS }),
    };
    const start = () => startVault(tempDir("ev-ha-node-"), { env, timeoutMs: 60_000 });
    nodes = await Promise.all([start(), start()]);
    const hook = await nodes[0].request("POST", "/webhooks", { url: receiver.url, events: ["secret.created"] }, master);
    expect(hook.status).toBe(201);
  }, 300_000);

  afterAll(async () => {
    if (figures.length > 0) process.stdout.write(`\nHA figures (docs/scaling.md):\n${figures.join("\n")}\n`);
    await killChildren();
    await receiver?.close();
    await cluster?.stop();
    cleanupTemp();
  }, 60_000);

  /** Everything that must hold after a round, and its figure line. */
  async function expectSurvived(label: string, tally: Tally, disruptedAt: number, stoppedAt: number): Promise<void> {
    for (const node of nodes) {
      expect(node.child.exitCode, node.stderr()).toBeNull();
      expect((await node.request("GET", "/health", undefined, null)).status).toBe(200);
    }
    // Only the answers of a working vault, or 503 for what a failover cut: never another 5xx.
    for (const status of tally.statuses.keys()) expect([200, 201, 503], `statuses: ${JSON.stringify([...tally.statuses])}`).toContain(status);
    expect(tally.gaveUp, "calls that gave up").toBe(0);
    // No value lost: every one-read read answered its value, first or replayed.
    expect(tally.lost, "one-read values lost").toEqual([]);
    // Served at most once, and never back after the burn.
    for (const [key, count] of tally.served) expect(count, key).toBe(1);
    expect(tally.served.size).toBe(tally.created.size);
    // The CLI's get of one-read secrets across it: every value printed once, none lost.
    expect(tally.cli.lost, "one-read values the CLI's get lost").toEqual([]);
    expect(tally.cli.failed, "the CLI's gets that failed").toEqual([]);
    expect(tally.cli.printed).toBeGreaterThan(0);
    const burned = [...tally.created.keys()];
    for (const key of burned.filter((_, i) => i % 7 === 0)) expect((await nodes[0].request("GET", `/secrets/${key}`, undefined, process.env.HA_MASTER_KEY)).status, key).toBe(404);
    // The replaced keys hold their last acknowledged value (or the one in flight when the load stopped).
    for (const [key, { acked, pending }] of tally.replaced) {
      const res = await nodes[1].request("GET", `/secrets/${key}`, undefined, process.env.HA_MASTER_KEY);
      expect(res.status, key).toBe(200);
      expect([acked, pending], key).toContain(((await res.json()) as { value: string }).value);
    }
    // Every acknowledged create's event delivered at least once (the outbox survives the failover).
    const keys = new Set(tally.created.keys());
    const end = Date.now() + 90_000;
    const delivered = () => new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { data: { key: string } }).data.key));
    while ([...keys].some((k) => !delivered().has(k)) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 250));
    expect([...keys].filter((k) => !delivered().has(k)), "undelivered secret.created events").toEqual([]);
    const gap = longestGap(tally.okAt, disruptedAt, stoppedAt);
    // CLI gets in flight at some moment of the disruption's first seconds (the database unreachable then).
    const acrossIt = tally.cli.spans.filter(([from, to]) => from < disruptedAt + 3000 && to > disruptedAt).length;
    if (label.startsWith("failover")) expect(acrossIt, "CLI gets in flight during the failover").toBeGreaterThan(0);
    figures.push(
      `${label}: longest gap without a successful answer ${gap} ms; 503 answers ${tally.statuses.get(503) ?? 0}, attempts cut ${tally.noAnswer}, calls retried ${tally.retriedCalls}, failed ${tally.gaveUp}; creates ${tally.created.size}; CLI gets printed ${tally.cli.printed} (${acrossIt} in flight at the disruption), lost ${tally.cli.lost.length}, failed ${tally.cli.failed.length}`,
    );
  }

  for (let round = 1; round <= ROUNDS; round++) {
    it(`a SIGKILL of the leader's Patroni and PostgreSQL under load loses nothing and serves again (failover ${round})`, async () => {
      await cluster.waitSyncStandby(await standbyName(cluster), 120_000);
      const load = startLoad(nodes, `failover-${round}`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      // The CLI's gets have begun (its secrets are made): some of them will be in flight across the failover.
      await load.cliReading;
      const old = await cluster.leader();
      expect(old).toBeDefined();
      const disruptedAt = Date.now();
      cluster.kill(old as string);
      await cluster.waitWritable(60_000);
      const promoted = await cluster.leader();
      expect(promoted).not.toBe(old);
      // Service again: keep the load on a while after the promotion.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const stoppedAt = Date.now();
      await load.stop();
      await expectSurvived(`failover ${round} (${old} -> ${promoted})`, load.tally, disruptedAt, stoppedAt);
      // The killed member rejoins as the synchronous standby for the next round.
      cluster.start(old as string);
      await cluster.waitSyncStandby(old as string, 120_000);
    }, 300_000);

    it(`a planned switchover under load fails no request (switchover ${round})`, async () => {
      const load = startLoad(nodes, `switchover-${round}`);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const disruptedAt = Date.now();
      const { from, to } = await cluster.switchover();
      await cluster.waitWritable(60_000);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const stoppedAt = Date.now();
      await load.stop();
      await expectSurvived(`switchover ${round} (${from} -> ${to})`, load.tally, disruptedAt, stoppedAt);
      await cluster.waitSyncStandby(from, 120_000);
    }, 300_000);
  }
});

/** The member that is not the leader. */
async function standbyName(cluster: HaCluster): Promise<string> {
  const leader = await cluster.leader();
  return cluster.members.find((m) => m.name !== leader)?.name ?? "pg2";
}

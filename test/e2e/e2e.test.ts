import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { version } from "../../src/version.js";
import {
  E2E_MASTER_KEY,
  cleanupTemp,
  databaseUrlOf,
  killChildren,
  prepareEngine,
  runCommand,
  startVault,
  tempDir,
} from "../support/e2e-helpers.js";
import { TEST_ENGINE, itSqlite } from "../support/helpers.js";

/**
 * The built command (node bin/ephemeral-vault.js) as an operator runs it:
 * real sockets, a real data directory, signals. In the `pg-matrix` project
 * the same processes run on PostgreSQL (e2e-helpers.ts: a database per data
 * dir, the same one on a restart); the cases about SQLite's files are itSqlite.
 */

const KEY_A = "aa".repeat(32);
const KEY_B = "bb".repeat(32);

afterEach(killChildren);
afterAll(cleanupTemp);

/** A look at the vault's database from outside the process (so no request of ours changes anything). */
interface OutsideView {
  /** The secrets rows: key, state, gone (1 when the ciphertext was dropped), by key. */
  secrets: () => Promise<unknown[]>;
  /** Every table of the database, each with all its rows as text (PostgreSQL only). */
  tablesAsText: () => Promise<[string, string][]>;
  close: () => Promise<void>;
}

/** Opens the database of the data dir `dir` read-only: vault.db on SQLite, the dir's database on PostgreSQL. */
async function outsideView(dir: string): Promise<OutsideView> {
  if (TEST_ENGINE === "pg") {
    const client = new pg.Client({ connectionString: databaseUrlOf(dir) });
    await client.connect();
    return {
      secrets: async () => (await client.query("SELECT key, state, (ciphertext IS NULL)::int AS gone FROM secrets ORDER BY key")).rows,
      tablesAsText: async () => {
        const tables = await client.query<{ name: string }>(
          "SELECT tablename AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1",
        );
        const out: [string, string][] = [];
        for (const { name } of tables.rows) {
          const rows = await client.query<{ text: string }>(`SELECT coalesce(string_agg(t::text, E'\\n'), '') AS text FROM "${name}" t`);
          out.push([name, rows.rows[0]?.text ?? ""]);
        }
        return out;
      },
      close: () => client.end(),
    };
  }
  const db = new Database(join(dir, "vault.db"), { readonly: true });
  return {
    secrets: async () => db.prepare("SELECT key, state, ciphertext IS NULL AS gone FROM secrets ORDER BY key").all(),
    tablesAsText: async () => {
      throw new Error("tablesAsText is for PostgreSQL: on SQLite the test reads the files");
    },
    close: async () => {
      db.close();
    },
  };
}

describe("durability", () => {
  it("an acknowledged write survives kill -9", async () => {
    const dir = tempDir();
    const first = await startVault(dir);
    const created = await first.request("POST", "/secrets", { key: "durable", value: "survives-a-crash", max_reads: 3 });
    expect(created.status).toBe(201);
    const pub = (await (await first.request("POST", "/secrets", { value: "public-survives" })).json()) as { id: string };
    const read = await first.request("GET", "/secrets/durable");
    expect(read.status).toBe(200);
    first.child.kill("SIGKILL");
    expect(await first.exited).toEqual({ code: null, signal: "SIGKILL" });
    // a PostgreSQL node keeps nothing in its data dir: the data is in the database
    if (TEST_ENGINE === "pg") expect(readdirSync(dir)).toEqual([]);

    const second = await startVault(dir);
    const again = await second.request("GET", "/secrets/durable");
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ key: "durable", value: "survives-a-crash", read_count: 2, max_reads: 3 });
    expect(await (await second.request("GET", `/secrets/${pub.id}`)).json()).toMatchObject({ value: "public-survives" });
  });

  it("kill -9 in the middle of concurrent creates loses none that were acknowledged (group commit)", async () => {
    const dir = tempDir();
    const first = await startVault(dir);
    const acknowledged: string[] = [];
    let stop = false;
    let n = 0;
    // 20 clients writing as fast as they can, so batches are in flight at the kill.
    const client = async () => {
      while (!stop && n < 60) {
        const key = `crash/${n++}`;
        try {
          const res = await first.request("POST", "/secrets", { key, value: `value-of-${key}` });
          if (res.status === 201) acknowledged.push(key);
        } catch {
          // the connection died with the process: not acknowledged
        }
      }
    };
    const clients = Array.from({ length: 20 }, client);
    while (acknowledged.length < 20) await new Promise((r) => setTimeout(r, 5));
    first.child.kill("SIGKILL");
    stop = true;
    await Promise.allSettled(clients);
    await first.exited;

    const second = await startVault(dir);
    for (const key of acknowledged) {
      const res = await second.request("GET", `/secrets/${key}`);
      expect(res.status, key).toBe(200);
      expect(await res.json()).toMatchObject({ key, value: `value-of-${key}` });
    }
  });

  it("a burn acknowledged before kill -9 stays burned", async () => {
    const dir = tempDir();
    const first = await startVault(dir);
    await first.request("POST", "/secrets", { key: "once", value: "v", max_reads: 1 });
    expect((await first.request("GET", "/secrets/once")).status).toBe(200);
    first.child.kill("SIGKILL");
    await first.exited;
    const second = await startVault(dir);
    expect((await second.request("GET", "/secrets/once")).status).toBe(404);
  });

  it.each(["SIGTERM", "SIGINT"] as const)("stops gracefully on %s: exit 0 within 5 s, data kept", async (signal) => {
    const dir = tempDir();
    const first = await startVault(dir);
    expect((await first.request("POST", "/secrets", { key: "kept", value: "after-a-clean-stop" })).status).toBe(201);
    const started = performance.now();
    expect(await first.stop(signal)).toEqual({ code: 0, signal: null });
    expect(performance.now() - started).toBeLessThan(5_000);
    // a clean stop checkpoints nothing away: the data is in the database
    const second = await startVault(dir);
    expect(await (await second.request("GET", "/secrets/kept")).json()).toMatchObject({ value: "after-a-clean-stop" });
  });

  it("finishes a request in flight when SIGTERM arrives, then exits 0", async () => {
    const dir = tempDir();
    const vault = await startVault(dir);
    const value = "v".repeat(60_000);
    const pending = Array.from({ length: 20 }, (_, i) => vault.request("POST", "/secrets", { key: `k${i}`, value }));
    // signal while the requests are on their way
    let signalled = 0;
    setTimeout(() => {
      signalled = performance.now();
      vault.child.kill("SIGTERM");
    }, 5);
    const results = await Promise.allSettled(pending.map((p) => p.then((r) => r.status)));
    expect(await vault.exited).toEqual({ code: 0, signal: null });
    // keep-alive connections are closed as soon as their response is out, not after the drain timeout
    expect(performance.now() - signalled).toBeLessThan(2_000);
    const acknowledged = results.flatMap((r, i) => (r.status === "fulfilled" && r.value === 201 ? [i] : []));
    // every acknowledged create is durable
    const again = await startVault(dir);
    for (const i of acknowledged) expect((await again.request("HEAD", `/secrets/k${i}`)).status).toBe(200);
  });
});

describe("encryption keys", () => {
  it("refuses to start with another VAULT_ENCRYPTION_KEY: exit 2, the message names it", async () => {
    const dir = tempDir();
    const first = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_A } });
    await first.request("POST", "/secrets", { key: "k", value: "v" });
    expect((await first.stop()).code).toBe(0);

    const wrong = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: E2E_MASTER_KEY, VAULT_ENCRYPTION_KEY: KEY_B });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("VAULT_ENCRYPTION_KEY");
    expect(wrong.stderr.trim().split("\n")).toHaveLength(1);
    expect(wrong.stderr).not.toContain(KEY_A);
    expect(wrong.stderr).not.toContain(KEY_B);

    // the right key still works
    const right = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_A } });
    expect(await (await right.request("GET", "/secrets/k")).json()).toMatchObject({ value: "v" });
  });

  // SQLite only: a PostgreSQL node never generates encryption.key (the key must be set).
  itSqlite("refuses a set key when the database was written with a generated encryption.key", async () => {
    const dir = tempDir();
    const first = await startVault(dir);
    await first.request("POST", "/secrets", { key: "k", value: "v" });
    await first.stop();
    expect(existsSync(join(dir, "encryption.key"))).toBe(true);
    const wrong = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: E2E_MASTER_KEY, VAULT_ENCRYPTION_KEY: KEY_B });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("VAULT_ENCRYPTION_KEY");
  });

  it("reads old secrets after a rotation (new key, old one in VAULT_PREVIOUS_ENCRYPTION_KEYS)", async () => {
    const dir = tempDir();
    const before = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_A } });
    await before.request("POST", "/secrets", { key: "old-1", value: "written-with-a", max_reads: 1 });
    await before.request("POST", "/secrets", { key: "old-2", value: "also-with-a" });
    await before.stop();

    const rotated = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_B, VAULT_PREVIOUS_ENCRYPTION_KEYS: KEY_A } });
    expect(await (await rotated.request("GET", "/secrets/old-2")).json()).toMatchObject({ value: "also-with-a" });
    expect((await rotated.request("POST", "/secrets", { key: "new", value: "written-with-b" })).status).toBe(201);
    await rotated.stop();

    // old records remain: dropping the old key is refused, naming the setting to fix
    const dropped = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: E2E_MASTER_KEY, VAULT_ENCRYPTION_KEY: KEY_B });
    expect(dropped.code).toBe(2);
    expect(dropped.stderr).toContain("VAULT_PREVIOUS_ENCRYPTION_KEYS");

    // burn and delete the old records, then the old key can go
    const again = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_B, VAULT_PREVIOUS_ENCRYPTION_KEYS: KEY_A } });
    expect(await (await again.request("GET", "/secrets/old-1")).json()).toMatchObject({ value: "written-with-a" });
    expect((await again.request("DELETE", "/secrets/old-2")).status).toBe(200);
    await again.stop();
    const onlyB = await startVault(dir, { env: { VAULT_ENCRYPTION_KEY: KEY_B } });
    expect(await (await onlyB.request("GET", "/secrets/new")).json()).toMatchObject({ value: "written-with-b" });
  });
});

describe("secrets never reach the disk or the output in clear", () => {
  // On SQLite the files (vault.db, its WAL) are read; on PostgreSQL every table's rows, in text and in hex.
  it("the value is not in vault.db, its WAL (on PostgreSQL: any table), stdout or stderr after create, read and burn", async () => {
    const dir = tempDir();
    const value = "plaintext-canary-5b1f0e2d9c";
    const publicValue = "public-canary-77aa31";
    const vault = await startVault(dir, { env: { VAULT_LOG_LEVEL: "debug" } });
    await vault.request("POST", "/secrets", { key: "canary", value, max_reads: 2 });
    const { id } = (await (await vault.request("POST", "/secrets", { value: publicValue, max_reads: 1 })).json()) as { id: string };
    expect(await (await vault.request("GET", "/secrets/canary")).json()).toMatchObject({ value });
    expect(await (await vault.request("PATCH", "/secrets/canary", { ttl_seconds: 60 })).json()).toEqual({ key: "canary", updated: true });
    expect(await (await vault.request("GET", "/secrets/canary")).json()).toMatchObject({ value, read_count: 2 });
    expect(await (await vault.request("GET", `/secrets/${id}`)).json()).toMatchObject({ value: publicValue });
    expect((await vault.request("GET", "/secrets/canary")).status).toBe(404);
    // errors and logs at debug level, too
    await vault.request("POST", "/secrets", { key: "bad key", value });
    await vault.request("POST", "/secrets", { value, ttl_seconds: "soon" });

    const scan = async () => {
      if (TEST_ENGINE === "pg") {
        const outside = await outsideView(dir);
        try {
          const tables = await outside.tablesAsText();
          expect(tables.map(([name]) => name)).toEqual(expect.arrayContaining(["secrets", "audit", "webhook_events"]));
          expect(tables.find(([name]) => name === "audit")?.[1]).toContain("canary"); // the rows were read
          for (const [name, text] of tables) {
            for (const v of [value, publicValue]) {
              expect(text.includes(v), name).toBe(false);
              expect(text.includes(Buffer.from(v).toString("hex")), name).toBe(false);
            }
          }
        } finally {
          await outside.close();
        }
      } else {
        const files = readdirSync(dir).filter((f) => f.startsWith("vault.db"));
        expect(files).toContain("vault.db");
        for (const f of files) {
          const bytes = readFileSync(join(dir, f));
          expect(bytes.includes(Buffer.from(value)), f).toBe(false);
          expect(bytes.includes(Buffer.from(publicValue)), f).toBe(false);
        }
      }
      for (const out of [vault.stdout(), vault.stderr()]) {
        expect(out).not.toContain(value);
        expect(out).not.toContain(publicValue);
      }
    };
    await scan(); // while running (WAL not checkpointed)
    expect(vault.stdout()).toMatch(/"request"|request/); // debug logging was on
    await vault.stop();
    await scan(); // after the clean stop
  });
});

describe("generated keys", () => {
  // SQLite only: key files in the data dir (a PostgreSQL node refuses to start without the keys set).
  itSqlite("generates master.key and encryption.key with mode 0600, prints the master key once to stderr", async () => {
    const dir = join(tempDir(), "fresh");
    const first = await startVault(dir, { env: { VAULT_MASTER_KEY: undefined } });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of ["master.key", "encryption.key"]) {
      expect(statSync(join(dir, f)).mode & 0o777, f).toBe(0o600);
    }
    const masterKey = readFileSync(join(dir, "master.key"), "utf8").trim();
    expect(masterKey.length).toBeGreaterThanOrEqual(16);
    expect(first.stderr()).toContain(`VAULT_MASTER_KEY=${masterKey}`);
    expect(first.stderr().split(masterKey)).toHaveLength(2); // exactly once
    expect(first.stdout()).not.toContain(masterKey);
    expect(first.stderr()).toMatch(/encryption key/);
    expect(readFileSync(join(dir, "encryption.key"), "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);

    // the printed key is the master key
    expect((await first.request("POST", "/secrets", { key: "k", value: "v" }, masterKey)).status).toBe(201);
    // the database and its WAL hold the audit log and ciphertexts: owner only
    for (const f of ["vault.db", "vault.db-wal"]) {
      expect(statSync(join(dir, f)).mode & 0o777, f).toBe(0o600);
    }
    expect((await first.request("GET", "/secrets/k", undefined, E2E_MASTER_KEY)).status).toBe(401);
    await first.stop();

    const second = await startVault(dir, { env: { VAULT_MASTER_KEY: undefined } });
    expect(second.stderr()).not.toContain(masterKey);
    expect(second.stderr()).not.toMatch(/generated/);
    expect(await (await second.request("GET", "/secrets/k", undefined, masterKey)).json()).toMatchObject({ value: "v" });
  });

  it("takes VAULT_API_KEY as the master key and then writes no master.key", async () => {
    const dir = tempDir();
    const vault = await startVault(dir, { env: { VAULT_MASTER_KEY: undefined, VAULT_API_KEY: "api-key-from-the-env-123" } });
    expect((await vault.request("POST", "/secrets", { value: "v" }, "api-key-from-the-env-123")).status).toBe(201);
    expect(existsSync(join(dir, "master.key"))).toBe(false);
    expect(vault.stderr()).not.toContain("api-key-from-the-env-123");
  });

  // SQLite only: :memory: is a SQLite database (and generates the master key).
  itSqlite("keeps everything in memory with VAULT_DATA_DIR=:memory:", async () => {
    const cwd = tempDir();
    const vault = await startVault(":memory:", { env: { VAULT_MASTER_KEY: undefined } });
    const printed = /VAULT_MASTER_KEY=(\S+)/.exec(vault.stderr())?.[1] as string;
    expect(printed).toBeDefined();
    expect((await vault.request("POST", "/secrets", { key: "k", value: "v" }, printed)).status).toBe(201);
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(":memory:")).toBe(false);
  });
});

describe("refusing to start", () => {
  it("a bad setting (VAULT_PORT=abc) exits 2 within a second with one line naming it, writing nothing", () => {
    const dir = join(tempDir(), "never-created");
    const result = runCommand([], { VAULT_DATA_DIR: dir, VAULT_PORT: "abc" });
    expect(result.code).toBe(2);
    expect(result.ms).toBeLessThan(1_000);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("VAULT_PORT");
    expect(result.stdout).toBe("");
    expect(existsSync(dir)).toBe(false);
  });

  it.each([
    ["a short master key", { VAULT_MASTER_KEY: "short" }, "VAULT_MASTER_KEY"],
    ["a malformed encryption key", { VAULT_ENCRYPTION_KEY: "xyz" }, "VAULT_ENCRYPTION_KEY"],
    ["a bad log level", { VAULT_LOG_LEVEL: "chatty" }, "VAULT_LOG_LEVEL"],
    ["a bad public url", { VAULT_PUBLIC_URL: "nope" }, "VAULT_PUBLIC_URL"],
    ["a malformed license public key", { VAULT_LICENSE_PUBLIC_KEY: "nope" }, "VAULT_LICENSE_PUBLIC_KEY"],
    ["a bad boolean", { VAULT_TRUST_PROXY: "sometimes" }, "VAULT_TRUST_PROXY"],
    ["a host that is no address", { VAULT_HOST: "999.1.1.1" }, "VAULT_HOST"],
  ])("%s exits 2, naming the setting, writing nothing", (_name, env, setting) => {
    const dir = join(tempDir(), "never-created");
    const result = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: E2E_MASTER_KEY, ...env });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(setting);
    expect(existsSync(dir)).toBe(false);
  });

  it("an unknown flag exits 2", () => {
    const result = runCommand(["--no-such-flag"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no-such-flag/);
  });

  // SQLite only: a PostgreSQL node does not use the data dir.
  itSqlite("a data dir that is a file exits 2 naming VAULT_DATA_DIR", () => {
    const file = join(tempDir(), "a-file");
    writeFileSync(file, "not a directory");
    const result = runCommand(["--port", "0"], { VAULT_DATA_DIR: file, VAULT_MASTER_KEY: E2E_MASTER_KEY });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("VAULT_DATA_DIR");
  });

  // SQLite only: a PostgreSQL node does not use the data dir.
  it.runIf(TEST_ENGINE === "sqlite" && existsSync("/proc/self"))("a data dir that cannot be created under /proc exits 2 at once (no endless mkdir)", () => {
    const result = runCommand(["--port", "0"], { VAULT_DATA_DIR: "/proc/no-such-dir/vault", VAULT_MASTER_KEY: E2E_MASTER_KEY }, 5_000);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("VAULT_DATA_DIR");
  });

  it("a port in use exits 2 naming VAULT_PORT, like any bad setting", async () => {
    const dir = tempDir();
    const first = await startVault(dir);
    const port = new URL(first.url).port;
    const other = tempDir();
    await prepareEngine(other); // on PostgreSQL: a database of its own, migrated before the listen fails
    const result = runCommand(["--port", port], { VAULT_DATA_DIR: other, VAULT_MASTER_KEY: E2E_MASTER_KEY });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/VAULT_PORT .*EADDRINUSE/);
  });
});

describe("HTTP over a real socket", () => {
  it("answers 413 JSON to a body over 1 MiB, with Content-Length and chunked", async () => {
    const vault = await startVault(tempDir());
    const big = Buffer.from(JSON.stringify({ key: "big", value: "x".repeat(1024 * 1024 + 10) }));
    for (const chunked of [false, true]) {
      // a connection of its own (agent: false): the server may close it without reading the whole body
      const { status, headers, body } = await new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
        (resolve, reject) => {
          const req = httpRequest(`${vault.url}/secrets`, {
            method: "POST",
            agent: false,
            headers: {
              authorization: `Bearer ${E2E_MASTER_KEY}`,
              "content-type": "application/json",
              ...(chunked ? {} : { "content-length": String(big.length) }),
            },
          });
          req.on("response", (res) => {
            let text = "";
            res.setEncoding("utf8").on("data", (s: string) => (text += s));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
          });
          req.on("error", reject);
          for (let i = 0; i < big.length; i += 64 * 1024) req.write(big.subarray(i, i + 64 * 1024));
          req.end();
        },
      );
      expect(status, chunked ? "chunked" : "sized").toBe(413);
      expect(JSON.parse(body)).toMatchObject({ error: expect.any(String) });
      expect(headers["cache-control"]).toBe("no-store");
    }
    expect(await (await vault.request("GET", "/secrets")).json()).toEqual({ secrets: [] });
    // the server is fine afterwards
    expect((await vault.request("POST", "/secrets", { key: "small", value: "v" })).status).toBe(201);
  });

  it("decodes %2F in a key, answers HEAD without counting, 404 and 405 as JSON", async () => {
    const vault = await startVault(tempDir());
    expect((await vault.request("POST", "/secrets", { key: "team/db", value: "v", max_reads: 2 })).status).toBe(201);
    const head = await vault.request("HEAD", "/secrets/team%2Fdb");
    expect(head.status).toBe(200);
    expect(await (await vault.request("GET", "/secrets/team%2Fdb")).json()).toMatchObject({ key: "team/db", read_count: 1 });
    const unknown = await vault.request("GET", "/nowhere");
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: expect.any(String) });
    const wrong = await vault.request("POST", "/secrets/team/db", { value: "x" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toMatch(/GET.*PUT/);
    expect(await wrong.json()).toEqual({ error: expect.any(String) });
  });
});

describe("the command line", () => {
  it("--version prints the version", () => {
    const result = runCommand(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it("--help prints the usage with every setting", () => {
    const result = runCommand(["--help"]);
    expect(result.code).toBe(0);
    for (const text of ["ephemeral-vault", "license keygen", "license issue", "--port", "--data-dir", "VAULT_MASTER_KEY", "VAULT_API_KEY", "PORT"]) {
      expect(result.stdout).toContain(text);
    }
    expect(runCommand(["serve", "--help"]).stdout).toBe(result.stdout);
    const serveVersion = runCommand(["serve", "--version"]);
    expect(serveVersion.code).toBe(0);
    expect(serveVersion.stdout.trim()).toBe(version);
  });

  it("an unknown command exits 2", () => {
    const result = runCommand(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command/);
  });

  it("serve is the default command and answers /health, /openapi.json and the API on the printed url", async () => {
    const vault = await startVault(tempDir(), { args: [] });
    expect(vault.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(vault.stderr()).toContain(`ephemeral-vault ${version} listening on ${vault.url}`);
    expect(await (await fetch(`${vault.url}/health`)).json()).toEqual({ status: "ok" });
    const doc = (await (await fetch(`${vault.url}/openapi.json`)).json()) as { openapi: string };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect((await vault.request("GET", "/secrets", undefined, null)).status).toBe(401);
    const created = (await (await vault.request("POST", "/secrets", { value: "v" })).json()) as { url: string; id: string };
    // --port 0: the default VAULT_PUBLIC_URL names the port actually listened on, not 0
    expect(created.url).toBe(`${vault.url}/s/${created.id}`);
    expect((await fetch(created.url, { headers: { authorization: `Bearer ${E2E_MASTER_KEY}` } })).status).toBe(200);
  });

  it("uses VAULT_PUBLIC_URL for public secret urls", async () => {
    const vault = await startVault(tempDir(), { env: { VAULT_PUBLIC_URL: "https://vault.example.com/" } });
    const created = (await (await vault.request("POST", "/secrets", { value: "v" })).json()) as { url: string; id: string };
    expect(created.url).toBe(`https://vault.example.com/s/${created.id}`);
  });

  it("sweeps expired secrets in the background (VAULT_SWEEP_INTERVAL_MS)", async () => {
    const dir = tempDir();
    const vault = await startVault(dir, { env: { VAULT_SWEEP_INTERVAL_MS: "100" } });
    await vault.request("POST", "/secrets", { key: "short", value: "v", ttl_seconds: 1 });
    await vault.request("POST", "/secrets", { key: "long", value: "v", ttl_seconds: 600 });
    // look at the database from outside, so no request of ours expires anything
    const outside = await outsideView(dir);
    try {
      const state = outside.secrets;
      expect(await state()).toEqual([
        { key: "long", state: "active", gone: 0 },
        { key: "short", state: "active", gone: 0 },
      ]);
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && ((await state())[1] as { state: string }).state !== "expired") {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await state()).toEqual([
        { key: "long", state: "active", gone: 0 },
        { key: "short", state: "expired", gone: 1 },
      ]);
    } finally {
      await outside.close();
    }
    expect(await (await vault.request("POST", "/prune")).json()).toEqual({ pruned: 1 });
  });
});

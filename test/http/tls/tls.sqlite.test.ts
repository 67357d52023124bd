import { request as httpRequest } from "node:http";
import { connect as http2Connect } from "node:http2";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as netConnect } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../../src/assembly/server.js";
import type { RunningServer } from "../../../src/assembly/server.js";
import { ConfigError, loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/log/log.js";
import { fingerprintOf, httpsRequest, makeCa, makeLeaf, writePair } from "../../support/tls-helpers.js";
import type { TestCertificate } from "../../support/webhook-receiver.js";

// HTTPS built in (docs/deploy.md "The executable alone, on HTTPS", docs/configuration.md): a vault in
// process on 127.0.0.1 with VAULT_TLS_CERT / VAULT_TLS_KEY from files, real
// TLS clients. The vault runs on `:memory:` (SQLite by construction); the
// spawned vault on both engines is test/e2e/tls.test.ts.

const MASTER = "tls-master-key-0123456789abcdef";
const auth = { authorization: `Bearer ${MASTER}` };

let authority: TestCertificate;
let first: TestCertificate;
let second: TestCertificate;
const dirs: string[] = [];
const running: RunningServer[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "ev-tls-"));
  dirs.push(dir);
  return dir;
}

/** A vault in process with TLS from `files`; the log lines in `logs`. */
async function start(files: { cert: string; key: string }, env: Record<string, string> = {}) {
  const logs: string[] = [];
  const config = loadConfig(
    { port: "0" },
    Object.assign({ VAULT_DATA_DIR: ":memory:", VAULT_MASTER_KEY: MASTER, VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key, VAULT_SWEEP_INTERVAL_MS: "0" }, env),
  );
  const server = await startServer(config, createLogger("info", { write: (line: string) => void logs.push(line) }), () => {});
  running.push(server);
  return { server, logs };
}

beforeAll(async () => {
  authority = await makeCa();
  [first, second] = await Promise.all([makeLeaf(authority), makeLeaf(authority)]);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("HTTPS from VAULT_TLS_CERT and VAULT_TLS_KEY", () => {
  it("serves the API, the pages and errors over HTTPS with Strict-Transport-Security, to node:https and to fetch", async () => {
    const { server } = await start(writePair(tempDir(), first));
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = [authority.cert];
    const created = await httpsRequest(`${server.url}/secrets`, ca, {
      method: "POST",
      headers: Object.assign({ "content-type": "application/json" }, auth),
      body: JSON.stringify({ key: "db/password", value: "hunter2" }),
    });
    expect(created.status).toBe(201);
    expect(created.fingerprint).toBe(fingerprintOf(first));
    for (const [path, status] of [
      ["/secrets/db%2Fpassword", 200],
      ["/health", 200],
      ["/ui/login", 200],
      ["/", 200],
      ["/no/such/route", 404],
      ["/secrets/missing", 404],
    ] as const) {
      const res = await httpsRequest(server.url + path, ca, { headers: auth });
      expect([path, res.status]).toEqual([path, status]);
      expect([path, res.headers["strict-transport-security"]]).toEqual([path, "max-age=63072000"]);
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    }
    // An answer the app never sees (the HTTP parser refused it) carries it too.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, ca, servername: "localhost" }, () => socket.write("GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"));
      let text = "";
      socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      socket.on("end", () => resolve(text));
      socket.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain("Strict-Transport-Security: max-age=63072000\r\n");
    // fetch (undici) speaks HTTP/1.1 to it as well.
    const { Agent: UndiciAgent, fetch } = await import("undici");
    const res = await fetch(`${server.url}/secrets/db%2Fpassword`, { headers: auth, dispatcher: new UndiciAgent({ connect: { ca } }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { value: string }).value).toBe("hunter2");
    expect(res.headers.get("strict-transport-security")).toBe("max-age=63072000");
  });

  it("refuses TLS 1.1 and an HTTP/2-only client; a client offering h2 and http/1.1 gets HTTP/1.1", async () => {
    const { server } = await start(writePair(tempDir(), first));
    const refusal = await new Promise<NodeJS.ErrnoException>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, rejectUnauthorized: false, minVersion: "TLSv1", maxVersion: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0" });
      socket.on("secureConnect", () => reject(new Error(`TLS ${socket.getProtocol()} was accepted`)));
      socket.on("error", resolve);
    });
    // The server's alert, not the client's own refusal to offer TLS 1.1.
    expect(refusal.code).toBe("ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION");
    const tls12 = await new Promise<string | null>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, ca: [authority.cert], servername: "localhost", maxVersion: "TLSv1.2" }, () => {
        resolve(socket.getProtocol());
        socket.end();
      });
      socket.on("error", reject);
    });
    expect(tls12).toBe("TLSv1.2");
    const h2 = await new Promise<Error>((resolve, reject) => {
      const session = http2Connect(server.url, { ca: [authority.cert] });
      session.on("connect", () => {
        session.close();
        reject(new Error("HTTP/2 was agreed"));
      });
      session.on("error", resolve);
    });
    expect((h2 as NodeJS.ErrnoException).code).toBe("ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL");
    const both = await new Promise<string | false | null>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, ca: [authority.cert], servername: "localhost", ALPNProtocols: ["h2", "http/1.1"] }, () => {
        resolve(socket.alpnProtocol);
        socket.end();
      });
      socket.on("error", reject);
    });
    expect(both).toBe("http/1.1");
  });

  it("makes the console cookie Secure and public secrets' url https:// when VAULT_PUBLIC_URL is unset", async () => {
    const { server } = await start(writePair(tempDir(), first));
    const ca = [authority.cert];
    const signIn = await httpsRequest(`${server.url}/ui/login`, ca, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: MASTER }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = String(signIn.headers["set-cookie"]);
    expect(cookie).toMatch(/^vault_console=/);
    expect(cookie).toMatch(/; Secure/);
    const created = await httpsRequest(`${server.url}/secrets`, ca, {
      method: "POST",
      headers: Object.assign({ "content-type": "application/json" }, auth),
      body: JSON.stringify({ value: "for a colleague", public: true }),
    });
    expect(created.status).toBe(201);
    const url = (JSON.parse(created.body) as { url: string }).url;
    expect(url.startsWith(`${server.url}/s/`)).toBe(true);
  });

  it("redirects plain HTTP on VAULT_HTTP_REDIRECT_PORT with 308 to the same path on HTTPS, and 404s ACME challenges", async () => {
    const { server } = await start(writePair(tempDir(), first), { VAULT_HTTP_REDIRECT_PORT: "0" });
    const redirectPort = server.redirectPort as number;
    expect(redirectPort).toBeGreaterThan(0);
    const plain = (method: string, path: string, host: string | undefined) =>
      new Promise<{ status: number; location: string | undefined; hsts: string | undefined }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: redirectPort, method, path, setHost: false, headers: host === undefined ? {} : { host } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, hsts: res.headers["strict-transport-security"] as string | undefined }));
        });
        req.on("error", reject);
        req.end();
      });
    const get = await plain("GET", "/s/abc?x=1", `vault.test:${redirectPort}`);
    expect(get).toEqual({ status: 308, location: `https://vault.test:${server.port}/s/abc?x=1`, hsts: undefined });
    expect(await plain("POST", "/secrets", "[::1]:80")).toEqual({ status: 308, location: `https://[::1]:${server.port}/secrets`, hsts: undefined });
    expect((await plain("GET", "/.well-known/acme-challenge/some-token", "vault.test")).status).toBe(404);
    expect((await plain("GET", "/", undefined)).status).toBe(400);

    // With VAULT_PUBLIC_URL https://, that origin, whatever the Host.
    const named = await start(writePair(tempDir(), first), { VAULT_HTTP_REDIRECT_PORT: "0", VAULT_PUBLIC_URL: "https://vault.example.com" });
    const res = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: named.server.redirectPort, path: "/ui/login", headers: { host: "elsewhere" } }, (r) => {
        r.resume();
        resolve({ status: r.statusCode ?? 0, location: r.headers.location });
      });
      req.on("error", reject);
      req.end();
    });
    expect(res).toEqual({ status: 308, location: "https://vault.example.com/ui/login" });
  });

  it("serves a pair renamed into place to new handshakes, with no failed request and no dropped connection; a bad new pair keeps the old", async () => {
    const dir = tempDir();
    const files = writePair(dir, first);
    const { server, logs } = await start(files);
    const ca = [authority.cert];
    // A keep-alive connection opened before the swap.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const kept = await httpsRequest(`${server.url}/health`, ca, { agent });
    expect(kept.fingerprint).toBe(fingerprintOf(first));

    const seen: string[] = [];
    const failures: unknown[] = [];
    let go = true;
    const loop = (async () => {
      while (go) {
        try {
          const res = await httpsRequest(`${server.url}/health`, ca);
          if (res.status !== 200) failures.push(res.status);
          seen.push(res.fingerprint);
        } catch (err) {
          failures.push(err);
        }
      }
    })();
    await expect.poll(() => seen.length).toBeGreaterThan(5);
    writePair(dir, second);
    await expect.poll(() => seen.at(-1), { timeout: 5000 }).toBe(fingerprintOf(second));
    const atSwap = seen.length;
    await expect.poll(() => seen.length).toBeGreaterThan(atSwap + 5);
    go = false;
    await loop;
    expect(failures).toEqual([]);
    expect(seen.slice(seen.indexOf(fingerprintOf(second)))).not.toContain(fingerprintOf(first));
    // The connection of before the swap still works, on its first handshake.
    const again = await httpsRequest(`${server.url}/health`, ca, { agent });
    expect(again.status).toBe(200);
    expect(again.fingerprint).toBe(fingerprintOf(first));
    agent.destroy();
    expect(logs.join("")).toMatch(/TLS certificate reloaded/);

    // A key that is not the certificate's: refused with a log line, the second pair stays.
    writeFileSync(join(dir, "key.pem.new"), first.key);
    const { renameSync } = await import("node:fs");
    renameSync(join(dir, "key.pem.new"), files.key);
    await expect.poll(() => logs.join(""), { timeout: 5000 }).toMatch(/TLS certificate not reloaded/);
    const refusedLine = logs.find((line) => line.includes("TLS certificate not reloaded")) as string;
    expect(refusedLine).toContain("VAULT_TLS_KEY is not the private key of the certificate in VAULT_TLS_CERT");
    expect(refusedLine).not.toContain("PRIVATE KEY");
    expect((await httpsRequest(`${server.url}/health`, ca)).fingerprint).toBe(fingerprintOf(second));
    // SIGHUP's reload (the serve command) says the same.
    expect(server.reloadTls?.()).toBe("refused");
  });

  it("keeps the connection limits over TLS: a stalled handshake is closed, a busy connection is not evicted for a newcomer", async () => {
    const { server } = await start(writePair(tempDir(), first), { VAULT_HEADERS_TIMEOUT_MS: "300", VAULT_MAX_CONNECTIONS: "1" });
    // TCP connected, no ClientHello: closed by the handshake timeout (VAULT_HEADERS_TIMEOUT_MS), not after Node's 120 s.
    const stalled = netConnect({ host: "127.0.0.1", port: server.port });
    const closed = new Promise<void>((resolve) => stalled.once("close", () => resolve()));
    stalled.on("error", () => {});
    await expect.poll(() => stalled.destroyed, { timeout: 5000 }).toBe(true);
    await closed;

    // A: a request whose headers are in and whose body is still coming: busy, never evicted.
    const a = await new Promise<import("node:tls").TLSSocket>((resolve, reject) => {
      const socket = tlsConnect({ host: "127.0.0.1", port: server.port, ca: [authority.cert], servername: "localhost" }, () => resolve(socket));
      socket.on("error", reject);
    });
    let answerA = "";
    a.setEncoding("utf8").on("data", (chunk: string) => (answerA += chunk));
    const body = JSON.stringify({ key: "busy/one", value: "slow body" });
    a.write(`POST /secrets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${MASTER}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // B: with the one slot busy, the local peer's reserve answers it; A stays.
    expect((await httpsRequest(`${server.url}/health`, [authority.cert])).status).toBe(200);
    expect(a.destroyed).toBe(false);
    a.write(body.slice(5));
    await expect.poll(() => answerA, { timeout: 5000 }).toMatch(/^HTTP\/1\.1 201 /);
    a.destroy();
  });

  it("records the client's address in the audit log, and lets an in-flight request finish at a graceful stop", async () => {
    const { server } = await start(writePair(tempDir(), first));
    const ca = [authority.cert];
    const created = await httpsRequest(`${server.url}/secrets`, ca, {
      method: "POST",
      headers: Object.assign({ "content-type": "application/json" }, auth),
      body: JSON.stringify({ key: "audited/one", value: "v" }),
    });
    expect(created.status).toBe(201);
    const audit = JSON.parse((await httpsRequest(`${server.url}/audit?key=audited%2Fone`, ca, { headers: auth })).body) as { entries: { action: string; ip: string | null }[] };
    expect(audit.entries.length).toBeGreaterThan(0);
    expect(audit.entries.map((e) => e.ip)).toEqual(audit.entries.map(() => "127.0.0.1"));

    // Headers in, body still coming when the stop begins: the answer still comes, then the stop ends.
    const socket = await new Promise<import("node:tls").TLSSocket>((resolve, reject) => {
      const s = tlsConnect({ host: "127.0.0.1", port: server.port, ca, servername: "localhost" }, () => resolve(s));
      s.on("error", reject);
    });
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (answer += chunk));
    const body = JSON.stringify({ key: "inflight/one", value: "during the stop" });
    socket.write(`POST /secrets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${MASTER}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    running.splice(running.indexOf(server), 1);
    const stopped = server.stop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write(body.slice(5));
    await expect.poll(() => answer, { timeout: 5000 }).toMatch(/^HTTP\/1\.1 201 /);
    await stopped;
    socket.destroy();
  });

  it("refuses to start with one of the two settings, an unreadable file or a pair that does not match", async () => {
    const dir = tempDir();
    const files = writePair(dir, first);
    expect(() => loadConfig({}, { VAULT_TLS_CERT: files.cert })).toThrow(/VAULT_TLS_KEY must be set with VAULT_TLS_CERT/);
    expect(() => loadConfig({}, { VAULT_TLS_KEY: files.key })).toThrow(/VAULT_TLS_CERT must be set with VAULT_TLS_KEY/);
    expect(() => loadConfig({}, { VAULT_HTTP_REDIRECT_PORT: "80" })).toThrow(/VAULT_HTTP_REDIRECT_PORT needs VAULT_TLS_CERT/);
    const startError = async (cert: string, key: string) => {
      const err = await start({ cert, key }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    };
    expect(await startError(join(dir, "missing.pem"), files.key)).toBe(`VAULT_TLS_CERT ${join(dir, "missing.pem")} cannot be read (ENOENT)`);
    writeFileSync(join(dir, "other-key.pem"), second.key);
    const mismatch = await startError(files.cert, join(dir, "other-key.pem"));
    expect(mismatch).toBe("VAULT_TLS_KEY is not the private key of the certificate in VAULT_TLS_CERT");
    expect(await startError(files.key, files.key)).toBe("VAULT_TLS_CERT holds no PEM certificate");
  });
});

import { connect } from "node:net";
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_IP } from "../../src/config.js";
import type { Socket } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";

/**
 * The built server on real sockets: requests the HTTP layer refuses still
 * get JSON, and idle or slow clients are bounded (connection cap, header
 * timeout).
 */

afterEach(killChildren);
afterAll(cleanupTemp);

/** Host and port of a vault url. */
function target(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port) };
}

/** Writes raw bytes and resolves with everything the server sent once it closes (or after 5 s). */
function rawExchange(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(target(url));
    let got = "";
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      got += chunk;
      // A keep-alive answer: stop once the whole body is in.
      const m = /\r\ncontent-length: (\d+)\r\n/i.exec(got);
      const head = got.indexOf("\r\n\r\n");
      if (m && head >= 0 && Buffer.byteLength(got.slice(head + 4)) >= Number(m[1])) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.write(text);
  });
}

/** Splits a raw HTTP response into status, headers (lower-case names) and body. */
function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const head = raw.indexOf("\r\n\r\n");
  const lines = raw.slice(0, head).split("\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? "")?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status, headers, body: raw.slice(head + 4) };
}

/** A socket that has sent an unfinished request; `closed` resolves with the ms it stayed open and what it got. */
function slowClient(url: string): { socket: Socket; closed: Promise<{ ms: number; got: string }> } {
  const started = Date.now();
  const socket = connect(target(url));
  let got = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => (got += chunk));
  socket.on("error", () => undefined);
  socket.write("GET /health HTTP/1.1\r\nHost: vault\r\n");
  const closed = new Promise<{ ms: number; got: string }>((resolve) => socket.on("close", () => resolve({ ms: Date.now() - started, got })));
  return { socket, closed };
}

describe("every answer is JSON", () => {
  it.each([
    ["a backslash in the path", "GET /\\secrets HTTP/1.1\r\nHost: localhost\r\n\r\n"],
    ["* as the request target", "OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n"],
    ["a malformed Host", "GET /health HTTP/1.1\r\nHost: a/b\r\n\r\n"],
    ["a Host with a user part", "GET /health HTTP/1.1\r\nHost: user@localhost\r\n\r\n"],
    ["a request line the parser refuses", "NOT A REQUEST\r\n\r\n"],
    ["a header without a colon", "GET /health HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n"],
  ])("%s: 400 application/json {error}", async (_what, request) => {
    const vault = await startVault(tempDir());
    const res = parseRaw(await rawExchange(vault.url, request));
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as { error: unknown };
    expect(typeof body.error).toBe("string");
    // The server still answers normally afterwards.
    expect((await vault.request("GET", "/health", undefined, null)).status).toBe(200);
  });

  it("headers larger than the parser takes: 431 application/json", async () => {
    const vault = await startVault(tempDir());
    const res = parseRaw(await rawExchange(vault.url, `GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`));
    expect(res.status).toBe(431);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
  });
});

describe("slow clients", () => {
  const env = {
    VAULT_MAX_CONNECTIONS: "20",
    VAULT_HEADERS_TIMEOUT_MS: "1000",
    VAULT_REQUEST_TIMEOUT_MS: "2000",
    VAULT_KEEP_ALIVE_TIMEOUT_MS: "1000",
  };

  it("unfinished headers: connections over the cap are closed at once, the rest at the header timeout, and /health answers", async () => {
    const vault = await startVault(tempDir(), { env });
    const below = Array.from({ length: 10 }, () => slowClient(vault.url));
    await new Promise((r) => setTimeout(r, 100));
    // Under the cap the vault keeps serving while the slow connections hang.
    expect(await (await vault.request("GET", "/health", undefined, null)).json()).toEqual({ status: "ok" });

    const over = Array.from({ length: 30 }, () => slowClient(vault.url));
    const all = await Promise.all([...below, ...over].map((c) => c.closed));
    // Every slow connection was closed by the server; none was served.
    expect(all.every((c) => !c.got.includes("200 OK"))).toBe(true);
    // 20 were answered 408 at the header timeout; the rest were closed at once, each to make room for a newer one.
    const timedOut = all.filter((c) => c.got.startsWith("HTTP/1.1 408"));
    expect(timedOut.length).toBeGreaterThanOrEqual(10);
    expect(timedOut.length).toBeLessThanOrEqual(20);
    for (const c of timedOut) expect(parseRaw(c.got).headers["content-type"]).toMatch(/^application\/json/);
    expect(all.filter((c) => c.got === "").length).toBeGreaterThanOrEqual(20);

    expect(await (await vault.request("GET", "/health", undefined, null)).json()).toEqual({ status: "ok" });
  });

  it("a connection dribbling its headers is closed at VAULT_HEADERS_TIMEOUT_MS", async () => {
    const vault = await startVault(tempDir(), { env });
    const client = slowClient(vault.url);
    const drip = setInterval(() => client.socket.writable && client.socket.write(`X-Drip-${Date.now()}: 1\r\n`), 100);
    const { ms, got } = await client.closed;
    clearInterval(drip);
    expect(parseRaw(got).status).toBe(408);
    // Closed at the 1 s header timeout (checked every 500 ms), not at Node's default 60 s.
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(5000);
  });
});

/** A slow socket from `localAddress`: it sends half a request and then nothing. */
interface Held {
  /** Resolves once connected, or closed before connecting (refused). */
  settled: Promise<void>;
  /** The server closed it (or it never connected). */
  closed: () => boolean;
  socket: Socket;
}

function holdFrom(url: string, localAddress: string): Held {
  const socket = connect({ ...target(url), localAddress });
  let closed = false;
  socket.on("error", () => undefined);
  const settled = new Promise<void>((resolve) => {
    socket.once("connect", () => {
      socket.write("GET /health HTTP/1.1\r\nHost: vault\r\n");
      resolve();
    });
    socket.once("close", () => {
      closed = true;
      resolve();
    });
  });
  return { settled, closed: () => closed, socket };
}

/** Opens `count` slow sockets from `localAddress`, `batch` at a time (each batch connected before the next). */
async function holdMany(url: string, localAddress: string, count: number, batch = 50): Promise<Held[]> {
  const all: Held[] = [];
  for (let i = 0; i < count; i += batch) {
    const some = Array.from({ length: Math.min(batch, count - i) }, () => holdFrom(url, localAddress));
    await Promise.all(some.map((h) => h.settled));
    all.push(...some);
  }
  return all;
}

/** Waits until `done()` or `ms` pass, checking every 50 ms. */
async function waitFor(done: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}

/** GET /health with a 2 s limit: its status, or 0 when it failed or took longer. */
async function probe(url: string): Promise<number> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).status;
  } catch {
    return 0;
  }
}

describe("connections per client address", () => {
  const attacker = "127.0.0.2";

  it("several hundred slow sockets from one address: those over the cap are closed at once, /health from another address answers", async () => {
    // The defaults: VAULT_MAX_CONNECTIONS 512, VAULT_MAX_CONNECTIONS_PER_IP, the 10 s header timeout.
    const vault = await startVault(tempDir());
    const count = DEFAULT_MAX_CONNECTIONS + 88;
    const held = await holdMany(vault.url, attacker, count);
    try {
      await waitFor(() => held.filter((h) => h.closed()).length >= count - DEFAULT_MAX_CONNECTIONS_PER_IP, 3000);
      const stillOpen = held.filter((h) => !h.closed()).length;

      // More attack while the probes run: all of it refused; the probes from 127.0.0.1 all answer.
      const wave = holdMany(vault.url, attacker, 100, 25);
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push(await probe(vault.url));
      const more = await wave;
      await waitFor(() => more.every((h) => h.closed()), 3000);
      expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
      // The cap's worth stays open (until the header timeout); every other one was closed at once.
      expect(stillOpen).toBe(DEFAULT_MAX_CONNECTIONS_PER_IP);
      expect(more.every((h) => h.closed())).toBe(true);
      expect(held.filter((h) => !h.closed()).length).toBe(DEFAULT_MAX_CONNECTIONS_PER_IP);
      for (const h of more) h.socket.destroy();
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });

  it("127.0.0.1 (the local CLI, a proxy on the same machine) is not capped per address", async () => {
    const vault = await startVault(tempDir(), { env: { VAULT_MAX_CONNECTIONS_PER_IP: "5" } });
    const local = await holdMany(vault.url, "127.0.0.1", 20);
    const other = await holdMany(vault.url, attacker, 20);
    try {
      await waitFor(() => other.filter((h) => h.closed()).length >= 15, 3000);
      expect(local.filter((h) => h.closed()).length).toBe(0);
      expect(other.filter((h) => !h.closed()).length).toBe(5);
      expect(await probe(vault.url)).toBe(200);
    } finally {
      for (const h of [...local, ...other]) h.socket.destroy();
    }
  });

  it("VAULT_MAX_CONNECTIONS_PER_IP=0 turns the per-address cap off", async () => {
    const vault = await startVault(tempDir(), { env: { VAULT_MAX_CONNECTIONS_PER_IP: "0" } });
    const other = await holdMany(vault.url, attacker, DEFAULT_MAX_CONNECTIONS_PER_IP + 10);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(other.filter((h) => h.closed()).length).toBe(0);
    } finally {
      for (const h of other) h.socket.destroy();
    }
  });
});

/** A whole GET /health from `localAddress` on a fresh socket: its status, or 0 when reset or not answered within 2 s. */
function probeFrom(url: string, localAddress: string): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect({ ...target(url), localAddress });
    let got = "";
    const done = (status: number) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(status);
    };
    const timer = setTimeout(() => done(0), 2000);
    socket.setEncoding("utf8");
    socket.on("error", () => done(0));
    socket.on("connect", () => socket.write("GET /health HTTP/1.1\r\nHost: vault\r\nConnection: close\r\n\r\n"));
    socket.on("data", (chunk: string) => {
      got += chunk;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) done(Number(m[1]));
    });
    socket.on("close", () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
  });
}

describe("slowloris from several addresses at VAULT_MAX_CONNECTIONS", () => {
  it("9 addresses holding every slot: the connections waiting longest for their headers make room, and every health probe is answered", async () => {
    const vault = await startVault(tempDir(), { env: { VAULT_MAX_CONNECTIONS: "24", VAULT_HEADERS_TIMEOUT_MS: "10000", VAULT_REQUEST_TIMEOUT_MS: "20000" } });
    const held: Held[] = [];
    try {
      for (let a = 2; a <= 10; a++) held.push(...(await holdMany(vault.url, `127.0.0.${a}`, 4)));
      // 36 slow sockets against 24 slots: the first ones were closed as the later ones came.
      await waitFor(() => held.filter((h) => !h.closed()).length <= 24, 3000);
      expect(held.filter((h) => !h.closed()).length).toBe(24);
      const statuses: number[] = [];
      for (let i = 0; i < 29; i++) {
        statuses.push(await probeFrom(vault.url, i % 2 === 0 ? "127.0.0.1" : "127.0.0.20"));
        // The attack goes on between probes.
        held.push(holdFrom(vault.url, `127.0.0.${2 + (i % 9)}`));
      }
      expect(statuses).toEqual(Array.from({ length: 29 }, () => 200));
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });
});

import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpServer } from "../../src/http/server.js";
import type { VaultServer } from "../../src/http/server.js";
import { VaultResponse } from "../../src/http/response.js";
import { createLogger } from "../../src/log/log.js";

/**
 * VaultResponse (src/http/response.ts): every answer of the vault's server
 * carries X-Request-Id and the security headers exactly once, and an answer
 * that names one of them itself keeps its own value.
 */

let server: VaultServer;
let port = 0;

beforeAll(async () => {
  const app = new Hono<{ Bindings: { outgoing: unknown } }>();
  app.use(async (c, next) => {
    if (c.env.outgoing instanceof VaultResponse) c.env.outgoing.requestId = "req-1";
    await next();
  });
  app.get("/json", (c) => c.json({ ok: true }));
  app.get("/own-lower", (c) => c.json({ ok: true }, 200, { "cache-control": "private" }));
  app.get("/own-upper", (c) => c.json({ ok: true }, 200, { "X-Request-Id": "mine" }));
  app.get("/headers-object", (c) => {
    c.header("Cache-Control", "max-age=1");
    return c.json({ ok: true });
  });
  app.get("/empty", (c) => c.body(null, 204));
  app.get("/response", () => new Response("text", { headers: { "Content-Type": "text/plain" } }));
  const limits = { headersTimeoutMs: 5000, requestTimeoutMs: 10000, keepAliveTimeoutMs: 5000, maxConnections: 100, maxConnectionsPerIp: 64 };
  server = createHttpServer(app.fetch, limits, createLogger("silent"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends one raw request; resolves with the status and every header line (lower-case names, in order). */
function exchange(requestLine: string): Promise<{ status: number; lines: [string, string][] }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port });
    let got = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      got += chunk;
      if (got.includes("\r\n\r\n")) socket.end();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const head = got.slice(0, got.indexOf("\r\n\r\n")).split("\r\n");
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? "")?.[1]);
      const lines = head.slice(1).map((line): [string, string] => {
        const i = line.indexOf(":");
        return [line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim()];
      });
      resolve({ status, lines });
    });
    socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  });
}

/** The values of one header, in order (more than one: sent twice). */
function values(lines: [string, string][], name: string): string[] {
  return lines.filter(([n]) => n === name).map(([, v]) => v);
}

describe("VaultResponse", () => {
  it("adds the request id and the security headers once, before the answer's own", async () => {
    const { status, lines } = await exchange("GET /json HTTP/1.1");
    expect(status).toBe(200);
    expect(values(lines, "x-request-id")).toEqual(["req-1"]);
    expect(values(lines, "cache-control")).toEqual(["no-store"]);
    expect(values(lines, "x-content-type-options")).toEqual(["nosniff"]);
    expect(values(lines, "content-type")).toEqual(["application/json"]);
    expect(lines.slice(0, 3).map(([n]) => n)).toEqual(["x-request-id", "cache-control", "x-content-type-options"]);
  });

  it("keeps a header the answer sets itself, in any case, and sends it once", async () => {
    const lower = await exchange("GET /own-lower HTTP/1.1");
    expect(values(lower.lines, "cache-control")).toEqual(["private"]);
    expect(values(lower.lines, "x-content-type-options")).toEqual(["nosniff"]);
    const upper = await exchange("GET /own-upper HTTP/1.1");
    expect(values(upper.lines, "x-request-id")).toEqual(["mine"]);
    expect(values(upper.lines, "cache-control")).toEqual(["no-store"]);
    const viaHeaders = await exchange("GET /headers-object HTTP/1.1");
    expect(values(viaHeaders.lines, "cache-control")).toEqual(["max-age=1"]);
    expect(values(viaHeaders.lines, "x-request-id")).toEqual(["req-1"]);
  });

  it("covers answers without a body, built as web Responses, and the app's 404", async () => {
    for (const path of ["/empty", "/response", "/missing"]) {
      const { lines } = await exchange(`GET ${path} HTTP/1.1`);
      expect(values(lines, "x-request-id"), path).toEqual(["req-1"]);
      expect(values(lines, "cache-control"), path).toEqual(["no-store"]);
      expect(values(lines, "x-content-type-options"), path).toEqual(["nosniff"]);
    }
  });

  it("gives the HTTP parser's own 400 (a request line it refuses) the security headers, and no request id", async () => {
    const { status, lines } = await exchange("GET /json HTTP/1.1 extra");
    expect(status).toBe(400);
    expect(values(lines, "x-request-id")).toEqual([]);
    expect(values(lines, "cache-control")).toEqual(["no-store"]);
    expect(values(lines, "x-content-type-options")).toEqual(["nosniff"]);
    expect(values(lines, "content-type")).toEqual(["application/json"]);
  });

  it("gives the adapter's own 400 (a target it cannot parse) the security headers, and no request id", async () => {
    const { status, lines } = await exchange("GET * HTTP/1.1");
    expect(status).toBe(400);
    expect(values(lines, "x-request-id")).toEqual([]);
    expect(values(lines, "cache-control")).toEqual(["no-store"]);
    expect(values(lines, "x-content-type-options")).toEqual(["nosniff"]);
  });
});

import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";

/**
 * What the proxy does to one forwarded request's answer, after the vault
 * handled it fully: `503` answers the client 503 `{"error": "the database is
 * unavailable"}` instead (an unknown outcome, as a failover gives), `reset`
 * destroys the client's socket without a byte of answer, `cut` sends the
 * vault's status and headers and half its body, then destroys the socket.
 */
export type Fault = "503" | "reset" | "cut";

/** One request the proxy forwarded to the vault. */
export interface Forwarded {
  method: string;
  /** Path and query as the client sent them. */
  path: string;
  /** The request's Idempotency-Key header, or undefined. */
  idempotencyKey: string | undefined;
  /** The vault's status. */
  status: number;
  /** The vault's Idempotent-Replayed header, or undefined. */
  replayed: string | undefined;
  /** What the client got instead of the vault's answer, or undefined (passed through). */
  fault: Fault | undefined;
}

/** A fault-injecting HTTP proxy on loopback in front of a real vault. */
export interface FaultProxy {
  /** http://127.0.0.1:<port>. */
  url: string;
  /** Every request forwarded so far, in order. */
  forwarded: Forwarded[];
  /** Replaces the plan (see Plan) and clears `forwarded`. */
  plan: (plan: Plan) => void;
  /** Stops listening and closes every connection. */
  close: () => Promise<void>;
}

/**
 * Which answers the proxy loses: the next requests matching `match` (method
 * and path) get `faults` in order, one each (null: that one passes), then
 * `always` (if set) every one after; other requests pass through.
 */
export interface Plan {
  match: (method: string, path: string) => boolean;
  faults?: (Fault | null)[];
  always?: Fault;
  /** A Retry-After header (seconds) on the proxy's 503s; none when undefined. */
  retryAfter?: number;
}

/** Headers not copied hop to hop. */
const HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive"]);

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Starts a proxy on 127.0.0.1 (an ephemeral port) that forwards every
 * request to `target` (a vault's base address), waits for the vault's whole
 * answer, then passes it on or, by the plan, loses it (Fault). Used to show
 * what a client does when the vault acted but the answer never arrived.
 */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const forwarded: Forwarded[] = [];
  let current: Plan = { match: () => false };
  let faults: (Fault | null)[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const body = await bodyOf(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP.has(name) && typeof value === "string") headers[name] = value;
    }
    const upstream = await fetch(target + path, {
      method,
      headers,
      body: method === "GET" || method === "HEAD" ? undefined : new Uint8Array(body),
      redirect: "manual",
    });
    const answer = Buffer.from(await upstream.arrayBuffer());
    const planned = current.match(method, path) ? (faults.length > 0 ? faults.shift() : current.always) : undefined;
    const fault = planned ?? undefined;
    forwarded.push({
      method,
      path,
      idempotencyKey: req.headers["idempotency-key"] as string | undefined,
      status: upstream.status,
      replayed: upstream.headers.get("idempotent-replayed") ?? undefined,
      fault,
    });
    if (fault === "reset") {
      req.socket.destroy();
      return;
    }
    if (fault === "cut") {
      res.writeHead(upstream.status, { "content-type": "application/json", "content-length": String(answer.length) });
      res.write(answer.subarray(0, Math.floor(answer.length / 2)), () => setTimeout(() => req.socket.destroy(), 20));
      return;
    }
    if (fault === "503") {
      const retryAfter = current.retryAfter === undefined ? {} : { "retry-after": String(current.retryAfter) };
      res.writeHead(503, { "content-type": "application/json", ...retryAfter });
      res.end(JSON.stringify({ error: "the database is unavailable", message: "try again shortly" }));
      return;
    }
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP.has(name)) out[name] = value;
    });
    res.writeHead(upstream.status, out);
    res.end(answer);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the proxy has no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    forwarded,
    plan: (plan) => {
      current = plan;
      faults = [...(plan.faults ?? [])];
      forwarded.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

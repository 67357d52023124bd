import { createServer } from "node:https";
import type { Server } from "node:https";
import type { IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { generate } from "selfsigned";

/** A self-signed certificate for localhost, 127.0.0.1 and ::1 (PEM). */
export interface TestCertificate {
  cert: string;
  key: string;
}

/** Makes a self-signed certificate that is its own CA (selfsigned library, EC P-256). */
export async function makeCertificate(): Promise<TestCertificate> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** One request the receiver got: the raw body exactly as sent. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTPS webhook receiver on 127.0.0.1 for the tests. */
export interface Receiver {
  /** https://127.0.0.1:<port>/hook */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Statuses to answer with, in order; once used up every request gets `otherwise` (default 200). */
  respond: (statuses: number[], otherwise?: number) => void;
  /** Resolves once at least `n` requests have arrived (rejects after `timeoutMs`). */
  waitFor: (n: number, timeoutMs?: number) => Promise<ReceivedRequest[]>;
  close: () => Promise<void>;
}

/**
 * Starts an HTTPS server on 127.0.0.1 with `certificate`, recording every
 * request. `port` 0 picks a free one; give a port to restart on the same one.
 */
export async function startReceiver(certificate: TestCertificate, port = 0): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let queue: number[] = [];
  let otherwise = 200;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const status = queue.shift() ?? otherwise;
      res.writeHead(status, { "content-type": "text/plain" }).end("ok");
      for (const w of waiters.filter((w) => requests.length >= w.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const actualPort = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${actualPort}/hook`,
    port: actualPort,
    requests,
    respond: (statuses, other = 200) => {
      queue = [...statuses];
      otherwise = other;
    },
    waitFor: (n, timeoutMs = 15_000) =>
      requests.length >= n
        ? Promise.resolve(requests)
        : new Promise<ReceivedRequest[]>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`expected ${n} webhook requests, got ${requests.length}`)), timeoutMs);
            waiters.push({
              n,
              resolve: () => {
                clearTimeout(timer);
                resolve(requests);
              },
            });
          }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

import { X509Certificate } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import type { Agent, RequestOptions } from "node:https";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { generate } from "selfsigned";
import type { TestCertificate } from "./webhook-receiver.js";

// HTTPS requests against a vault on loopback that serves a test certificate
// (webhook-receiver.ts makeCertificate: self-signed, so it is its own CA).

/** A test CA (selfsigned library, EC P-256): trust its cert, sign leaves with makeLeaf(). */
export async function makeCa(name = "ephemeral-vault test CA"): Promise<TestCertificate> {
  const pems = await generate([{ name: "commonName", value: name }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A server certificate for localhost, 127.0.0.1 and ::1 signed by `ca`; each call a new key and serial. */
export async function makeLeaf(ca: TestCertificate): Promise<TestCertificate> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: { key: ca.key, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true },
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

/** One HTTPS answer, with the certificate the server presented. */
export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** SHA-256 fingerprint of the peer certificate, as X509Certificate.fingerprint256 gives it. */
  fingerprint: string;
  /** The ALPN protocol agreed, false when none. */
  alpn: string | false | null;
}

/**
 * An HTTPS request with node:https trusting `ca` only. `agent` false (the
 * default): a new connection, so a new handshake; give an Agent to reuse one.
 */
export function httpsRequest(
  url: string,
  ca: string[],
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent | false } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const init: RequestOptions = { method: options.method ?? "GET", headers: options.headers, ca, agent: options.agent ?? false };
    const req = request(url, init, (res) => {
      const socket = res.socket as TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      const alpn = socket.alpnProtocol;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, fingerprint, alpn }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

/** The SHA-256 fingerprint of a PEM certificate, as the server presents it. */
export function fingerprintOf(cert: TestCertificate): string {
  return new X509Certificate(cert.cert).fingerprint256;
}

/**
 * Writes a pair to `dir/cert.pem` and `dir/key.pem` the way certificate
 * tools do: new files beside the old, renamed into place (key first).
 */
export function writePair(dir: string, pair: TestCertificate): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  writeFileSync(`${key}.new`, pair.key, { mode: 0o600 });
  writeFileSync(`${cert}.new`, pair.cert);
  renameSync(`${key}.new`, key);
  renameSync(`${cert}.new`, cert);
  return { cert, key };
}

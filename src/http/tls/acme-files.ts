import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { webcrypto, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { checkPair } from "./source.js";
import type { CertificatePair } from "./source.js";
import type { Validity } from "./acme-renewer.js";

/*
 * What ACME keeps in the data dir (docs/deploy.md "Certificates by ACME"):
 * `acme/account.key` (the ACME account's private key), `acme/account.json`
 * (its URL at the CA, `{directory, url}`), `acme/cert.pem` (the
 * chain) and `acme/key.pem` (its private key), each mode 0600 in a 0700
 * directory, each written to a temporary file and renamed into place.
 */

/** The directory under the data dir that holds the ACME files. */
export const ACME_DIR = "acme";

/** The paths of the ACME files of a data dir. */
export function acmePaths(dataDir: string): { dir: string; accountKey: string; account: string; cert: string; key: string } {
  const dir = join(dataDir, ACME_DIR);
  return { dir, accountKey: join(dir, "account.key"), account: join(dir, "account.json"), cert: join(dir, "cert.pem"), key: join(dir, "key.pem") };
}

/**
 * Writes `text` to `path` atomically (a temporary file beside it, mode 0600,
 * renamed over it), the directory made first (mode 0700).
 * @throws the file system's error (EACCES, ENOSPC).
 */
export function writePrivateFile(path: string, text: string): void {
  const dir = join(path, "..");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, path);
}

/** The text of a file, or undefined when it does not exist. @throws any other read error. */
export function readIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** The validity of the first certificate of a PEM chain, Unix milliseconds. */
export function validityOf(certPem: string): Validity {
  const cert = new X509Certificate(certPem);
  return { notBefore: Date.parse(cert.validFrom), notAfter: Date.parse(cert.validTo) };
}

/** The DNS names of a certificate's subjectAltName, lower-cased. */
export function dnsNamesOf(certPem: string): string[] {
  const alt = new X509Certificate(certPem).subjectAltName ?? "";
  return alt
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.startsWith("DNS:"))
    .map((s) => s.slice(4).toLowerCase());
}

/**
 * Why a stored pair cannot be served for `domains` at `now`, or undefined
 * when it can: it loads and matches (source.ts checkPair), names every
 * domain, and has not expired.
 */
export function storedPairProblem(pair: CertificatePair, domains: readonly string[], now: number): string | undefined {
  try {
    checkPair(pair, { cert: "acme/cert.pem", key: "acme/key.pem" });
  } catch (err) {
    return (err as Error).message;
  }
  const names = dnsNamesOf(pair.cert);
  const missing = domains.filter((d) => !names.includes(d));
  if (missing.length > 0) return `the stored certificate does not name ${missing.join(", ")}`;
  if (validityOf(pair.cert).notAfter <= now) return "the stored certificate has expired";
  return undefined;
}

/**
 * A self-signed placeholder for the HTTPS listener until the first ACME
 * certificate exists (ECDSA P-256, valid one day, named after `domains`): no
 * client trusts it; it lets /health say why over HTTPS (`curl -k`).
 * @returns a checked pair.
 */
export async function placeholderPair(domains: readonly string[]): Promise<CertificatePair> {
  const crypto = webcrypto as unknown as Crypto;
  x509.cryptoProvider.set(crypto);
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = (await crypto.subtle.generateKey(alg, true, ["sign", "verify"])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(8))).toString("hex").replace(/^[89a-f]/, "1"),
    name: "CN=ephemeral-vault waiting for its ACME certificate",
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    keys,
    signingAlgorithm: alg,
    extensions: [new x509.SubjectAlternativeNameExtension(domains.map((value) => ({ type: "dns" as const, value })))],
  });
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString("base64").replace(/(.{64})/g, "$1\n").replace(/\n?$/, "\n")}-----END PRIVATE KEY-----\n`;
  const pair = { cert: cert.toString("pem"), key };
  checkPair(pair, { cert: "the placeholder certificate", key: "its key" });
  return pair;
}

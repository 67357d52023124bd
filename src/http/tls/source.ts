import { createPrivateKey, X509Certificate } from "node:crypto";
import { createSecureContext } from "node:tls";

/*
 * Where the HTTPS listener's certificate comes from (docs/deploy.md, "The executable alone, on HTTPS"):
 * a CertificateSource hands out the current pair and says when it changed;
 * the server (http/server.ts) swaps its secure context then. Files
 * (file-source.ts, VAULT_TLS_CERT / VAULT_TLS_KEY) are one source; an ACME
 * client would be another, feeding the same listener.
 */

/** A certificate chain and its private key, PEM text. Never logged: the key is secret. */
export interface CertificatePair {
  /** The server certificate first, then its intermediates. */
  cert: string;
  key: string;
}

/** What a loaded pair's certificate says, for log lines (nothing secret). */
export interface CertificateInfo {
  subject: string;
  /** subjectAltName as X509Certificate gives it, e.g. `DNS:vault.example.com`; "" when none. */
  altNames: string;
  /** Not after, as the certificate gives it (e.g. `Jan  1 00:00:00 2027 GMT`). */
  validTo: string;
  /** SHA-256 fingerprint of the server certificate, colon-separated hex. */
  fingerprint256: string;
}

/** A source of the listener's certificate: the pair to serve now, and a signal when it changes. */
export interface CertificateSource {
  /** The pair to serve now (checked: it loads, and the key matches the certificate). */
  current(): CertificatePair;
  /**
   * Calls `listener` each time current() has changed to another checked pair.
   * @returns a function that removes the listener.
   */
  onChange(listener: () => void): () => void;
  /** Stops watching (files, timers); current() keeps its last pair. */
  close(): void;
}

/** Why a pair was refused; the message names what is wrong, never the key's text. */
export class CertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CertificateError";
  }
}

/**
 * Checks a pair the way the listener will use it: the certificate parses as
 * X.509, the key as a private key, the key belongs to the certificate, and
 * Node's TLS accepts them together (tls.createSecureContext).
 * @returns what the certificate says (subject, names, expiry, fingerprint).
 * @throws CertificateError saying which part is wrong (no key material in the message).
 */
export function checkPair(pair: CertificatePair, names: { cert: string; key: string }): CertificateInfo {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pair.cert);
  } catch {
    throw new CertificateError(`${names.cert} holds no PEM certificate`);
  }
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(pair.key);
  } catch {
    throw new CertificateError(`${names.key} holds no unencrypted PEM private key`);
  }
  if (!x509.checkPrivateKey(key)) throw new CertificateError(`${names.key} is not the private key of the certificate in ${names.cert}`);
  try {
    createSecureContext({ cert: pair.cert, key: pair.key });
  } catch (err) {
    // OpenSSL's reason (e.g. "ee key too small"), never the key's text.
    throw new CertificateError(`${names.cert} and ${names.key} cannot be used for TLS (${(err as Error).message})`);
  }
  return { subject: x509.subject.replace(/\n/g, ", "), altNames: x509.subjectAltName ?? "", validTo: x509.validTo, fingerprint256: x509.fingerprint256 };
}

import type { ValueCipher } from "../../crypto/cipher.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import type { CertificatePair } from "./source.js";

/*
 * What the nodes of one PostgreSQL database share for ACME (docs/deploy.md
 * "Certificates by ACME"), in rows of the `meta` table: the current
 * certificate (its key encrypted with the vault's root key), the renewal
 * lease that lets one node order at a time, and the HTTP-01 answers of an
 * order under way, so that a node the CA's request reaches answers another
 * node's challenge.
 */

/** The shared parts of ACME, for AcmeCertificateSource. Every method may throw the database's error. */
export interface SharedAcme {
  /** The certificate last ordered by any node, or undefined. */
  load(): Promise<CertificatePair | undefined>;
  /** Records a new certificate for the other nodes. */
  save(pair: CertificatePair): Promise<void>;
  /**
   * Takes the renewal lease for `node` until `now + ttlMs` (Unix ms): when
   * nobody holds it, its holder's time has passed, or `node` holds it.
   * @returns false when another node holds it.
   */
  takeLease(node: string, now: number, ttlMs: number): Promise<boolean>;
  /** Gives the lease up, if `node` holds it. */
  releaseLease(node: string): Promise<void>;
  putChallenge(token: string, keyAuthorization: string): Promise<void>;
  getChallenge(token: string): Promise<string | undefined>;
  removeChallenge(token: string): Promise<void>;
}

const CERTIFICATE = "acme_certificate";
const LEASE = "acme_renewal_lease";
const CHALLENGE = "acme_challenge:";
/** Binds the encrypted key to its row: a ciphertext moved to another row does not decrypt. */
const KEY_AAD = Buffer.from("ephemeral-vault acme_certificate key");

/**
 * The SharedAcme of a vault's database: `meta` rows written through its unit
 * of work, the certificate's key sealed with `cipher` (AES-256-GCM under the
 * root key, as secrets are).
 */
export function databaseAcme(tx: UnitOfWork<Work>, cipher: ValueCipher): SharedAcme {
  return {
    load: async () => {
      const text = await tx.run((w) => w.meta.get(CERTIFICATE));
      if (text === undefined) return undefined;
      const row = JSON.parse(text) as { cert: string; key: string };
      return { cert: row.cert, key: cipher.decrypt(Buffer.from(row.key, "base64"), KEY_AAD) };
    },
    save: async (pair) => {
      const row = JSON.stringify({ cert: pair.cert, key: cipher.encrypt(pair.key, KEY_AAD).toString("base64") });
      await tx.run((w) => w.meta.set(CERTIFICATE, row));
    },
    takeLease: async (node, now, ttlMs) => {
      const next = JSON.stringify({ node, until: now + ttlMs });
      const held = await tx.run((w) => w.meta.get(LEASE));
      if (held !== undefined) {
        const lease = JSON.parse(held) as { node: string; until: number };
        if (lease.node !== node && lease.until > now) return false;
      }
      // One statement decides between nodes that read the same row.
      return tx.run((w) => w.meta.replaceIf(LEASE, held, next));
    },
    releaseLease: async (node) => {
      const held = await tx.run((w) => w.meta.get(LEASE));
      if (held !== undefined && (JSON.parse(held) as { node: string }).node === node) {
        await tx.run((w) => w.meta.replaceIf(LEASE, held, JSON.stringify({ node, until: 0 })));
      }
    },
    putChallenge: async (token, keyAuthorization) => {
      await tx.run((w) => w.meta.set(CHALLENGE + token, keyAuthorization));
    },
    getChallenge: (token) => tx.run((w) => w.meta.get(CHALLENGE + token)),
    removeChallenge: async (token) => {
      await tx.run((w) => w.meta.remove(CHALLENGE + token));
    },
  };
}

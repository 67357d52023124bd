import { timingSafeEqual } from "node:crypto";
import { chainDigest } from "./digest.js";
import type { ChainKeys } from "./digest.js";

/**
 * Authenticated chain heads (docs/audit.md, "Tamper evidence"). A hash chain
 * shows an edited, inserted or removed row, but not a tail cut off with the
 * recorded head moved back to an earlier row. So each head is recorded with
 * a MAC under the chain key (HKDF of the root key, model/audit/chain.ts):
 * HMAC-SHA256 over the chain's name (null on SQLite's single chain), its
 * last position (the row count: SQLite ids and PostgreSQL `seq` run 1..n
 * without gaps) and the last row's hash. On PostgreSQL the set of chains is
 * authenticated too (chainSetMac), so removing a whole chain shows.
 *
 * One HMAC per head written.
 */

/** meta row holding the SQLite chain's head `{id, hash, mac}`: a truncated tail shows in `audit verify`. */
export const HEAD_META = "audit_head";

const HEAD_LABEL = "ephemeral-vault/audit-head";
const SET_LABEL = "ephemeral-vault/audit-chain-set";

/**
 * The MAC of a chain head.
 * @param chain the chain's name, null for SQLite's single chain.
 * @param seq the last row's position (SQLite: its id), 0 for an empty chain.
 * @returns 64 hex characters.
 */
export function headMac(key: Buffer, chain: string | null, seq: number, hash: string): string {
  return chainDigest(key, JSON.stringify([HEAD_LABEL, chain, seq, hash]));
}

/**
 * The MAC of a PostgreSQL log's set of chains (their names, sorted).
 * @returns 64 hex characters.
 */
export function chainSetMac(key: Buffer, chains: readonly string[]): string {
  return chainDigest(key, JSON.stringify([SET_LABEL, [...chains].sort()]));
}

/** Constant-time comparison of two hex MACs. */
export function macEquals(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === 32 && x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The id of the loaded root key whose chain key made `mac` over a head, or
 * undefined when none did.
 */
export function headKeyId(keys: ChainKeys, chain: string | null, seq: number, hash: string, mac: unknown): string | undefined {
  if (typeof mac !== "string") return undefined;
  for (const [id, key] of keys) if (macEquals(headMac(key, chain, seq, hash), mac)) return id;
  return undefined;
}

/** A SQLite chain head as the meta row `audit_head` records it. */
export interface RecordedHead {
  id: number;
  hash: string;
  mac?: string;
}

/** Parses the meta row `audit_head`; undefined when it is not a head record. */
export function parseHead(value: string): RecordedHead | undefined {
  try {
    const head = JSON.parse(value) as { id?: unknown; hash?: unknown; mac?: unknown };
    if (typeof head.id !== "number" || typeof head.hash !== "string") return undefined;
    return typeof head.mac === "string" ? { id: head.id, hash: head.hash, mac: head.mac } : { id: head.id, hash: head.hash };
  } catch {
    return undefined;
  }
}

/** The meta row `audit_head` for a head, signed under `key` (unsigned when null: tools that only read). */
export function headRecord(key: Buffer | null, id: number, hash: string): string {
  return key === null ? JSON.stringify({ id, hash }) : JSON.stringify({ id, hash, mac: headMac(key, null, id, hash) });
}

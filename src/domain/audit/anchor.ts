import type { ValueCipher } from "../../crypto/cipher.js";
import { chainDigest } from "../../model/audit/chain.js";
import { macEquals } from "../../model/audit/head.js";

/**
 * Audit anchors (docs/audit.md, "Anchoring the head outside the database").
 * The chain and its signed head show any edit made without the root key,
 * but not the whole database put back to an earlier state of its own (an
 * old head and its rows restored together). `ephemeral-vault audit head`
 * prints one line recording the head(s) now; kept where the database's
 * writers cannot write, `audit verify --anchor LINE` later fails when the
 * log is shorter than, or diverges from, what the line recorded.
 *
 *     ephemeral-vault-audit-anchor v1 engine=sqlite at=<ISO time> rows=<n> heads=<chain>:<seq>:<hash>[,...] key=<root key id> mac=<64 hex>
 *
 * `chain` is `-` for SQLite's single chain, else the PostgreSQL chain's name
 * (URI-encoded); `seq` its last position (SQLite: the row id, which is the
 * row count). `mac` is HMAC-SHA256 over everything before ` mac=` under
 * HKDF-SHA256(root key, empty salt, ANCHOR_INFO): only the root key's holder
 * makes a line that verifies.
 */

/** The HKDF info label of the anchor MAC key. */
export const ANCHOR_INFO = "ephemeral-vault/v1/audit-anchor";

const PREFIX = "ephemeral-vault-audit-anchor v1";
const LINE = /^ephemeral-vault-audit-anchor v1 engine=(sqlite|postgres) at=(\S+) rows=(\d+) heads=(\S*) key=([0-9a-f]{16}) mac=([0-9a-f]{64})$/;

/** SQLite's single chain, in an anchor line. */
export const SINGLE_CHAIN = "-";

/** What an anchor records. */
export interface Anchor {
  engine: "sqlite" | "postgres";
  /** When the line was made, ms since the epoch. */
  at: number;
  /** Rows in the log then, every chain together. */
  rows: number;
  /** Each chain's last position and hash (chains with no row are left out). */
  heads: { chain: string; seq: number; hash: string }[];
}

/**
 * The anchor line of `anchor`, signed under the current root key.
 * @returns one line, no newline.
 */
export function formatAnchor(anchor: Anchor, cipher: ValueCipher): string {
  const heads = anchor.heads.map((h) => `${h.chain === SINGLE_CHAIN ? h.chain : encodeURIComponent(h.chain)}:${h.seq}:${h.hash}`).join(",");
  const body = `${PREFIX} engine=${anchor.engine} at=${new Date(anchor.at).toISOString()} rows=${anchor.rows} heads=${heads} key=${cipher.currentKeyId}`;
  const key = cipher.derivedKeys(ANCHOR_INFO).get(cipher.currentKeyId) as Buffer;
  return `${body} mac=${chainDigest(key, body)}`;
}

/**
 * Reads and authenticates an anchor line.
 * @returns the anchor, or why the line is refused (malformed, its key not
 *   loaded, or a MAC that does not match: altered or forged).
 */
export function parseAnchor(line: string, cipher: ValueCipher): Anchor | string {
  const m = LINE.exec(line.trim());
  if (m === null) return "the anchor is not an ephemeral-vault-audit-anchor v1 line";
  const [, engine, at, rows, heads, keyId, mac] = m as unknown as [string, "sqlite" | "postgres", string, string, string, string, string];
  const key = cipher.derivedKeys(ANCHOR_INFO).get(keyId);
  if (key === undefined) return `the anchor was signed with root key ${keyId}, which is not loaded (VAULT_PREVIOUS_ENCRYPTION_KEYS)`;
  const body = line.trim().slice(0, line.trim().lastIndexOf(" mac="));
  if (!macEquals(chainDigest(key, body), mac)) return "the anchor's MAC does not match (the line was altered, or not made by this vault)";
  const parsed: Anchor = { engine, at: Date.parse(at), rows: Number(rows), heads: [] };
  for (const part of heads === "" ? [] : heads.split(",")) {
    const h = /^([^:]+):(\d+):([0-9a-f]{64})$/.exec(part);
    if (h === null) return "the anchor's heads are malformed";
    parsed.heads.push({ chain: h[1] === SINGLE_CHAIN ? SINGLE_CHAIN : decodeURIComponent(h[1] as string), seq: Number(h[2]), hash: h[3] as string });
  }
  return parsed;
}

/**
 * Checks a log against an anchor: each anchored chain must still hold the
 * anchored row at its position with the anchored hash (the chain, checked
 * by `audit verify`, then commits to every row before it), and the log must
 * have at least the anchored row count.
 * @param hashAt the hash of a chain's row at a position, or undefined when there is none.
 * @returns undefined when the log holds, else why not.
 */
export function checkAnchor(anchor: Anchor, rows: number, hashAt: (chain: string, seq: number) => string | undefined): string | undefined {
  for (const head of anchor.heads) {
    const hash = hashAt(head.chain, head.seq);
    const name = head.chain === SINGLE_CHAIN ? "the log" : `chain ${head.chain}`;
    if (hash === undefined) return `${name} is shorter than the anchor of ${new Date(anchor.at).toISOString()} recorded (row ${head.seq} is gone)`;
    if (hash !== head.hash) return `${name} diverges from the anchor of ${new Date(anchor.at).toISOString()} at row ${head.seq}`;
  }
  if (rows < anchor.rows) return `the log has ${rows} rows, fewer than the ${anchor.rows} the anchor of ${new Date(anchor.at).toISOString()} recorded`;
  return undefined;
}

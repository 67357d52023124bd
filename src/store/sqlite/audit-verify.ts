import type { ChainKeys, ChainSegment } from "../../model/audit-chain.js";
import { GENESIS_HASH, rowHash, segmentsAuthentic } from "../../model/audit-chain.js";
import { HEAD_META, headKeyId, parseHead } from "../../model/audit-head.js";
import type { ChainReport } from "../../model/audit-verify.js";
import type { AuditRow as Row } from "../audit.js";
import { readSegments } from "./audit-chain.js";
import type { Db } from "./db.js";

/**
 * Walks the whole chain in id order and checks each row's hash against the
 * previous row's hash and its own content (HMAC under the chain key of the
 * row's segment, or SHA-256 in a legacy plain segment), that timestamps
 * never decrease, that the segment record is authentic, and that the last
 * row is the head recorded in the meta table (a truncated tail). Once the
 * record says heads are signed, the head must carry a MAC under the last
 * segment's key (model/audit-head.ts) and its id must be the row count, so
 * a tail cut off with the head moved back, or every row removed, shows.
 * Reads only; streams the rows.
 * @param keys the chain keys of the loaded root keys (ValueCipher.auditChainKeys()).
 * @returns the first broken row's id and why, or the row count and head hash.
 */
export function verifyAuditChain(db: Db, keys: ChainKeys): ChainReport {
  const recorded = readSegments(db);
  const total = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM audit").get()?.n ?? 0;
  if (recorded === undefined) {
    if (total > 0) return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record is missing: the chain is not keyed (start the vault once to key it)" };
    return { ok: true, rows: 0, head: GENESIS_HASH };
  }
  const segments = recorded.segments;
  const last = segments[segments.length - 1];
  const lastKey = last?.key === null || last === undefined ? undefined : keys.get(last.key);
  if (last === undefined || last.key === null) {
    return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record does not end with a keyed segment (altered)" };
  }
  if (lastKey === undefined) {
    return {
      ok: false,
      rows: 0,
      brokenId: last.from,
      reason: `the chain's last segment is keyed with root key ${last.key}, which is not loaded (set VAULT_ENCRYPTION_KEY)`,
      missingKey: { keyId: last.key, setting: "VAULT_ENCRYPTION_KEY" },
    };
  }
  if (!segmentsAuthentic(lastKey, segments, recorded.mac, recorded.signedHeads)) {
    return { ok: false, rows: 0, brokenId: 1, reason: "the chain's segment record is not authentic (altered, or written under another key)" };
  }
  let prevHash = GENESIS_HASH;
  let prevAt = 0;
  let rows = 0;
  let lastId = 0;
  let segment = 0;
  const iter = db.prepare<[], Row>("SELECT * FROM audit ORDER BY id").iterate();
  for (const row of iter) {
    while (segment + 1 < segments.length && (segments[segment + 1] as ChainSegment).from <= row.id) segment += 1;
    const keyId = (segments[segment] as ChainSegment).key;
    const key = keyId === null ? null : keys.get(keyId);
    if (key === undefined) {
      iter.return?.();
      // The segment record is authentic (checked above): the key id is the one those rows were written with.
      return {
        ok: false,
        rows,
        brokenId: row.id,
        reason: `rows from here are keyed with root key ${keyId}, which is not loaded (add it to VAULT_PREVIOUS_ENCRYPTION_KEYS)`,
        missingKey: { keyId: keyId as string, setting: "VAULT_PREVIOUS_ENCRYPTION_KEYS" },
      };
    }
    const { hash, ...content } = row;
    let reason: string | undefined;
    if (row.at < prevAt) reason = "timestamp earlier than the previous row's";
    else if (rowHash(prevHash, content, key) !== hash) {
      reason = "hash does not match the row's content and the previous row's hash (row edited, removed or inserted)";
    }
    if (reason !== undefined) {
      iter.return?.();
      return { ok: false, rows, brokenId: row.id, reason };
    }
    rows += 1;
    lastId = row.id;
    prevAt = row.at;
    prevHash = hash;
  }
  const headRow = db.prepare<[string], { value: string }>("SELECT value FROM meta WHERE name = ?").get(HEAD_META);
  const head = headRow === undefined ? undefined : parseHead(headRow.value);
  if (recorded.signedHeads) {
    // The head is signed (model/audit-head.ts): a tail cut off and the head moved back shows, and so do removed rows.
    if (head === undefined) return { ok: false, rows, brokenId: lastId + 1, reason: "the recorded chain head is missing or unreadable (removed or altered)" };
    if (headKeyId(new Map([[last.key, lastKey]]), null, head.id, head.hash, head.mac) === undefined) {
      return { ok: false, rows, brokenId: head.id, reason: "the recorded chain head is not authentic (altered, or written under another key)" };
    }
  }
  if (head !== undefined) {
    if (head.id !== lastId || head.hash !== prevHash || (recorded.signedHeads && rows !== lastId)) {
      return { ok: false, rows, brokenId: Math.min(head.id, lastId) + 1, reason: "rows at the end of the chain are missing (the recorded head is not the last row)" };
    }
  } else if (headRow !== undefined || rows > 0) {
    return { ok: false, rows, brokenId: 1, reason: "the recorded chain head is missing" };
  }
  return { ok: true, rows, head: prevHash };
}

import { HEAD_META, headKeyId, headRecord, parseHead } from "../../../model/audit/head.js";
import type { RecordedHead } from "../../../model/audit/head.js";
import { CHAIN_META, GENESIS_HASH, macOf, parseSegments } from "../../../model/audit/chain.js";
import { checkSegments } from "../../../model/audit/walk.js";
import type { ChainKeys, ChainSegment, SegmentRecord } from "../../../model/audit/chain.js";
import { getMeta } from "../db.js";
import type { Db } from "../db.js";
import { metaUpsert } from "../../sql/meta.js";
import { render } from "../../sql/template.js";

/*
 * The SQLite side of the keyed audit chain (docs/audit.md): its segment
 * record and signed head in the meta table. The chain math (row hashes,
 * segment and head MACs) is model/audit/chain.ts and model/audit/head.ts.
 */

/** The recorded segments and their MAC, or undefined when the database has none. */
export function readSegments(db: Db): SegmentRecord | undefined {
  const value = getMeta(db, CHAIN_META);
  if (value === undefined) return undefined;
  return parseSegments(value);
}

/**
 * Opens the chain for writing with the current root key, at start (and at
 * the end of `rekey`, which has the old and new keys):
 *
 * - no segment record yet: rows already in the table become the plain first
 *   segment, and the keyed one starts after them;
 * - a record authenticated by the key of its last segment: kept when that is
 *   the current key; otherwise (after `rekey`) a new segment for the current
 *   key starts after the last row, and the record is signed anew;
 * - a record that cannot be authenticated (altered, or its last key not
 *   loaded): left as it is, never signed anew, so `audit verify` reports it.
 *
 * The chain head (meta `audit_head`) is then signed under the current key
 * (model/audit/head.ts): a head signed under a loaded key is signed anew
 * when that is not the current one (after `rekey`); an empty log without a
 * head, before heads are signed, gets the head {id 0, genesis}; an unsigned head is signed once, when the record
 * does not yet say heads are signed (the first start of a build that signs
 * them), and the record then says so. An unsigned head after that, or a
 * head whose MAC no loaded key made, is left as it is for `audit verify`.
 *
 * Runs in its own transaction; call it before any batch.
 * @param keys every loaded root key's chain key, by root key id.
 * @returns whether the record and head are authentic (false: the caller logs it).
 */
export function openChain(db: Db, currentKeyId: string, keys: ChainKeys): boolean {
  const currentKey = keys.get(currentKeyId);
  if (currentKey === undefined) throw new Error("the current root key's chain key is not loaded");
  return db.transaction(() => {
    const next = (db.prepare<[], { id: number | null }>("SELECT max(id) AS id FROM audit").get()?.id ?? 0) + 1;
    const recorded = readSegments(db);
    let segments: ChainSegment[];
    let signedHeads = false;
    if (recorded === undefined) {
      segments = next > 1 ? [{ from: 1, key: null }, { from: next, key: currentKeyId }] : [{ from: 1, key: currentKeyId }];
    } else {
      // The same segment check as `audit verify` (model/audit/walk.ts).
      const check = checkSegments(recorded, keys);
      if (!check.ok) return false;
      const last = check.last;
      signedHeads = recorded.signedHeads;
      segments =
        last.key === currentKeyId
          ? recorded.segments
          : last.from >= next
            ? [...recorded.segments.slice(0, -1), { from: last.from, key: currentKeyId }]
            : [...recorded.segments, { from: next, key: currentKeyId }];
    }
    const headValue = getMeta(db, HEAD_META);
    const head = headValue === undefined ? undefined : parseHead(headValue);
    let signed: RecordedHead | undefined;
    if (headValue === undefined) {
      // An empty log's first head; once heads are signed, a missing head is removed, not new.
      if (next === 1 && !signedHeads) signed = { id: 0, hash: GENESIS_HASH };
    } else if (head !== undefined) {
      const keyId = head.mac === undefined ? undefined : headKeyId(keys, null, head.id, head.hash, head.mac);
      if (keyId !== undefined || (head.mac === undefined && !signedHeads)) signed = head;
      if (keyId === currentKeyId && signedHeads && segments === recorded?.segments) return true;
    }
    // metaUpsert's text (store/sql/meta.ts); its parameters are the name and the value, in that order.
    const upsert = db.prepare<[string, string]>(render(metaUpsert("", ""), "sqlite").text);
    if (signed !== undefined) upsert.run(HEAD_META, headRecord(currentKey, signed.id, signed.hash));
    // A head that does not hold leaves the flag as it was, but a new segment (after `rekey`) is still recorded.
    const flag = signed !== undefined || signedHeads;
    if (signed !== undefined || segments !== recorded?.segments) {
      upsert.run(CHAIN_META, JSON.stringify({ segments, signedHeads: flag, mac: macOf(currentKey, segments, flag) }));
    }
    return signed !== undefined;
  })();
}

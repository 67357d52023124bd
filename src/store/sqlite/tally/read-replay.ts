import type { Database as Db } from "better-sqlite3";
import { chainedKey } from "../chained-key.js";
import { metaSelect, metaUpsert } from "../../sql/meta.js";
import { paramsOf, render } from "../../sql/template.js";
import { READS_FLUSHED_META } from "./read-tally.js";
import { STORED_AUDIT_HEAD, STORED_READ_COUNT, SecretReads, secretsWithReads } from "./secret-reads.js";

interface LiveSecret {
  id: number;
  readCount: number;
  head: number | null;
  changed: boolean;
}

/** The write-back mark, or undefined for a database without one (before schema version 14). */
function flushedMark(db: Db): number | undefined {
  const query = metaSelect(READS_FLUSHED_META);
  const rendered = render(query, "sqlite");
  const row = db.prepare(rendered.text).get(...paramsOf(query, rendered)) as { value: string } | undefined;
  return row === undefined ? undefined : Number(row.value);
}

/**
 * True when `secret.read` rows above the write-back mark may be reads that
 * the secrets' rows do not count (the vault stopped without writing its
 * read tally back: a crash). A tool that copies rows as they are (`migrate
 * --from-sqlite`) refuses such a file until a vault has opened it once.
 * Other rows above the mark only move audit heads, which such a copy does
 * not take.
 */
export function readsToReplay(db: Db): boolean {
  const mark = flushedMark(db);
  if (mark === undefined) return false;
  const row = db.prepare("SELECT 1 AS one FROM audit WHERE id > ? AND action = 'secret.read' LIMIT 1").get(mark);
  return row !== undefined;
}

/**
 * Brings the secrets' read counts and audit heads up to the audit log after
 * a stop that left some only in the read tally (kill -9, power loss): in id
 * order, each audit row above the write-back mark whose (scope, key) has a
 * live secret and an audit chain, and whose id is above that secret's
 * stored audit_head (its `secret_reads` row's, else its row's), moves the
 * head to it; a `secret.read` row among them counts a read. A stored pair
 * (read_count, audit_head) always agrees (read-tally.ts), so a read at or
 * below the head is in its count and one above is not. The new pairs go
 * into `secret_reads`, as a write-back writes them.
 * Then moves the mark to the last row. One transaction; runs before the
 * vault serves (openDatabase), O(rows above the mark).
 * @returns how many reads it counted.
 * @throws whatever SQLite throws (a read-only or full file): openDatabase
 *   then refuses to open it, and nothing is served with stale counts.
 */
export function replayReads(db: Db): number {
  const mark = flushedMark(db);
  if (mark === undefined) return 0;
  const rows = db
    .prepare("SELECT id, scope, key, action FROM audit WHERE id > ? ORDER BY id")
    .all(mark) as { id: number; scope: string; key: string | null; action: string }[];
  if (rows.length === 0) return 0;
  const live = db.prepare<[string, string], { id: number; read_count: number; audit_head: number | null }>(
    `SELECT s.id, ${STORED_READ_COUNT} AS read_count, ${STORED_AUDIT_HEAD} AS audit_head
       FROM ${secretsWithReads()} WHERE s.scope = ? AND s.key = ? AND s.state IN ('active', 'sealed')`,
  );
  const secrets = new Map<string, LiveSecret | null>();
  let reads = 0;
  for (const row of rows) {
    if (!chainedKey(row.key)) continue;
    const name = `${row.scope}\u0000${row.key}`;
    let secret = secrets.get(name);
    if (secret === undefined) {
      const found = live.get(row.scope, row.key);
      secret = found === undefined ? null : { id: found.id, readCount: found.read_count, head: found.audit_head, changed: false };
      secrets.set(name, secret);
    }
    if (secret === null || (secret.head !== null && row.id <= secret.head)) continue;
    secret.head = row.id;
    secret.changed = true;
    if (row.action === "secret.read") {
      secret.readCount++;
      reads++;
    }
  }
  // Into secret_reads, as a write-back writes (read-tally.ts): the pair is whole.
  const stored = new SecretReads(db);
  // The mark moved by the meta table's one upsert (store/sql/meta.ts).
  const moved = metaUpsert(READS_FLUSHED_META, String((rows[rows.length - 1] as { id: number }).id));
  const upsert = render(moved, "sqlite");
  const setMark = db.prepare(upsert.text);
  db.transaction(() => {
    for (const s of secrets.values()) if (s?.changed) stored.write(s.id, s.readCount, s.head);
    setMark.run(paramsOf(moved, upsert));
  }).immediate();
  return reads;
}

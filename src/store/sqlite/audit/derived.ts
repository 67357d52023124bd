import { getMeta } from "../db.js";
import type { Db } from "../db.js";
import { MAX_SPAN_IDS } from "./span.js";
import { STORED_AUDIT_HEAD, secretsWithReads } from "../tally/index.js";

/*
 * The audit log's derived structures checked against its rows (docs/audit.md,
 * "What is tamper-evident"). The chain hash covers the rows; the queries find
 * them through structures the hash does not cover: the spans (audit_span,
 * schema.sql version 10), each row's key-chain link (`prev`, version 13;
 * under the hash from meta `audit_prev_from` on, version 16) and each live
 * secret's head (`audit_head`, versions 13 and 15). Someone who can write the
 * file could edit those to make `GET /audit` skip rows whose hashes still
 * hold; this check shows it. Reads only, in SQLite's own bounded memory (its
 * sorter spills to temporary files): one pass over the keyed rows with
 * window functions, one over the spans, one over the rows by primary key.
 */

/** Where a derived structure does not match the rows: the row (or span's first row) and why. */
export interface DerivedBreak {
  id: number;
  reason: string;
}

/** Rows whose key is chained (model/records.ts PUBLIC_ID_PATTERN, as chained-key.ts chainedKey; schema.sql version 9). */
const CHAINED = "key IS NOT NULL AND NOT (length(key) = 64 AND key NOT GLOB '*[^0-9a-f]*')";

/** A span of (kind, scope, value) that holds row `id`: spans cover at most MAX_SPAN_IDS ids (checked below). */
const covered = (kind: string, scope: string, value: string, id: string): string =>
  `EXISTS (SELECT 1 FROM audit_span AS c WHERE c.kind = '${kind}' AND c.scope = ${scope} AND c.value = ${value}
     AND c.lo <= ${id} AND c.lo > ${id} - ${MAX_SPAN_IDS} AND c.hi >= ${id})`;

/**
 * Checks that every query finds every row it should (docs/audit.md, "What is
 * tamper-evident"):
 * - each keyed row's `prev` is the previous row of its (scope, key), or NULL
 *   on a row below meta `audit_prev_from` (written before links were kept),
 *   and every row older than such an unlinked row is in its key's spans;
 * - each key's walk starts at its newest row: a live secret's stored head is
 *   a row of its key at or above the key's newest row at or below meta
 *   `reads_flushed` (rows above it are in the read tally, replayed at start:
 *   tally/read-replay.ts); a key without a live secret has its newest span end at
 *   its newest row; every key span starts and ends at a row of its key;
 * - spans of one kind, scope and value never overlap and cover at most
 *   MAX_SPAN_IDS ids, and every row is in a span of its scope and of its
 *   (scope, action).
 * Run inside one read transaction (a consistent snapshot beside a writer).
 * @returns the first problem found, or undefined when the structures match the rows.
 */
export function checkDerived(db: Db): DerivedBreak | undefined {
  const prevFrom = Number(getMeta(db, "audit_prev_from") ?? Number.MAX_SAFE_INTEGER);
  const flushedText = getMeta(db, "reads_flushed");
  const flushed = flushedText === undefined ? Number.MAX_SAFE_INTEGER : Number(flushedText);
  const link = db
    .prepare<{ flushed: number; prevFrom: number }, { id: number; prev: number | null; expected: number | null; cut: number | null; next: number | null; bad_head: number }>(
      `WITH k AS (
         SELECT id, scope, key, prev, lag(id) OVER w AS expected, lead(id) OVER w AS next
           FROM audit WHERE ${CHAINED}
         WINDOW w AS (PARTITION BY scope, key ORDER BY id)
       ), b AS (
         SELECT *,
           max(CASE WHEN prev IS NULL AND expected IS NOT NULL THEN id END)
             OVER (PARTITION BY scope, key ORDER BY id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS cut,
           max(CASE WHEN id <= @flushed THEN id END) OVER (PARTITION BY scope, key) AS newest_flushed
         FROM k
       ), h AS (
         SELECT *,
           (SELECT count(*) FROM secrets AS l WHERE l.scope = b.scope AND l.key = b.key AND l.state IN ('active', 'sealed')) AS live,
           (SELECT ${STORED_AUDIT_HEAD} FROM ${secretsWithReads()} WHERE s.scope = b.scope AND s.key = b.key AND s.state IN ('active', 'sealed')) AS head,
           (SELECT hi FROM audit_span AS t WHERE t.kind = 'k' AND t.scope = b.scope AND t.value = b.key ORDER BY t.lo DESC LIMIT 1) AS span_hi
         FROM b WHERE next IS NULL
       )
       SELECT id, prev, expected, cut, next, 0 AS bad_head FROM b
        WHERE (prev IS NOT expected AND NOT (prev IS NULL AND id < @prevFrom))
           OR (cut IS NOT NULL AND NOT ${covered("k", "b.scope", "b.key", "b.id")})
       UNION ALL
       SELECT id, prev, expected, cut, next, 1 FROM h
        WHERE CASE WHEN live = 0 THEN span_hi IS NOT id
              ELSE newest_flushed IS NOT NULL AND (
                coalesce(head, span_hi) IS NULL OR coalesce(head, span_hi) < newest_flushed OR coalesce(head, span_hi) > id
                OR NOT EXISTS (SELECT 1 FROM audit AS o WHERE o.id = coalesce(h.head, h.span_hi) AND o.scope = h.scope AND o.key = h.key))
              END
       LIMIT 1`,
    )
    .get({ flushed, prevFrom });
  if (link !== undefined) {
    if (link.bad_head === 1) return { id: link.id, reason: "the key's head (a live secret's audit_head, else its newest span) is not the key's newest row: newer rows are hidden from queries by key" };
    if (link.prev !== link.expected && !(link.prev === null && link.id < prevFrom)) {
      return { id: link.id, reason: `the row's link (prev ${link.prev ?? "null"}) is not the previous row of its key (${link.expected ?? "none"}): rows are hidden from queries by key` };
    }
    return { id: link.id, reason: "the row is below an unlinked row of its key but in none of its key's spans: it is hidden from queries by key" };
  }
  const span = db
    .prepare<[], { kind: string; lo: number; why: string }>(
      `SELECT kind, lo, CASE WHEN hi - lo >= ${MAX_SPAN_IDS} THEN 'long' ELSE 'overlap' END AS why FROM (
         SELECT kind, scope, value, lo, hi, lag(hi) OVER (PARTITION BY kind, scope, value ORDER BY lo) AS before FROM audit_span
       ) WHERE before >= lo OR hi - lo >= ${MAX_SPAN_IDS} LIMIT 1`,
    )
    .get();
  if (span !== undefined) {
    return { id: span.lo, reason: span.why === "long" ? `an audit span (${span.kind}) covers more than ${MAX_SPAN_IDS} ids` : `two audit spans (${span.kind}) overlap: rows are hidden from filtered queries` };
  }
  const ends = db
    .prepare<[], { lo: number }>(
      `SELECT lo FROM audit_span AS s WHERE kind = 'k' AND (
         NOT EXISTS (SELECT 1 FROM audit AS o WHERE o.id = s.lo AND o.scope = s.scope AND o.key = s.value)
         OR NOT EXISTS (SELECT 1 FROM audit AS o WHERE o.id = s.hi AND o.scope = s.scope AND o.key = s.value)) LIMIT 1`,
    )
    .get();
  if (ends !== undefined) return { id: ends.lo, reason: "a key span does not start and end at rows of its key" };
  const row = db
    .prepare<[], { id: number; kind: string }>(
      `SELECT id, CASE WHEN ${covered("s", "a.scope", "''", "a.id")} THEN 'a' ELSE 's' END AS kind FROM audit AS a
        WHERE NOT ${covered("s", "a.scope", "''", "a.id")} OR NOT ${covered("a", "a.scope", "a.action", "a.id")} LIMIT 1`,
    )
    .get();
  if (row !== undefined) {
    return { id: row.id, reason: row.kind === "s" ? "the row is in none of its scope's spans: it is hidden from the unfiltered list" : "the row is in none of its action's spans: it is hidden from queries by action" };
  }
  return undefined;
}

/**
 * The part of checkDerived that concerns the rows above `after` alone (the
 * console's incremental check, verify.ts verifyAuditChainFrom): each
 * is in a span of its scope and of its (scope, action), and each keyed row's
 * link, when set, names an older row of its (scope, key). O(new rows) seeks.
 * @param after the last row an earlier check covered (0: every row).
 * @param upTo the last row to check.
 * @returns the first problem, or undefined.
 */
export function checkDerivedSince(db: Db, after: number, upTo: number): DerivedBreak | undefined {
  const row = db
    .prepare<[number, number], { id: number; kind: string }>(
      `SELECT id, CASE
           WHEN NOT ${covered("s", "a.scope", "''", "a.id")} THEN 's'
           WHEN NOT ${covered("a", "a.scope", "a.action", "a.id")} THEN 'a'
           ELSE 'k' END AS kind
         FROM audit AS a WHERE a.id > ? AND a.id <= ? AND (
           NOT ${covered("s", "a.scope", "''", "a.id")} OR NOT ${covered("a", "a.scope", "a.action", "a.id")}
           OR (a.prev IS NOT NULL AND NOT EXISTS (SELECT 1 FROM audit AS o WHERE o.id = a.prev AND o.id < a.id AND o.scope = a.scope AND o.key = a.key)))
         LIMIT 1`,
    )
    .get(after, upTo);
  if (row === undefined) return undefined;
  if (row.kind === "s") return { id: row.id, reason: "the row is in none of its scope's spans: it is hidden from the unfiltered list" };
  if (row.kind === "a") return { id: row.id, reason: "the row is in none of its action's spans: it is hidden from queries by action" };
  return { id: row.id, reason: "the row's link (prev) does not name an older row of its key: rows are hidden from queries by key" };
}

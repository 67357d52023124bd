import type { Database as Db } from "better-sqlite3";
import type { AuditRow } from "../../audit.js";
import { chainedKey } from "../chained-key.js";
import { STORED_AUDIT_HEAD, secretsWithReads } from "../tally/index.js";
import type { ReadTally } from "../tally/index.js";

/** The audit columns a page answers with (not `prev`, which is the store's own). */
export const AUDIT_COLUMNS = "id, scope, at, action, key, actor, principal_id, ip, count, hash";

/** How one row of an insert is linked: its key's previous row, and whether it needs a key span. */
export interface KeyLink {
  /** The id of the previous row of the same (scope, key), or null (none, or no key chain). */
  prev: number | null;
  /** True: no live secret holds the key's head when the batch commits, so the row gets a key span. */
  spanned: boolean;
}

/** A key's state while one insert links its rows. */
interface OpenKey {
  /** The newest row of the key so far, or null. */
  last: number | null;
  /** The live secret holding the key's head; undefined when the key has none. */
  secretId: number | undefined;
}

/**
 * One row of a key in about CHECKPOINT_ONE_IN gets a key span although a
 * live secret holds its key's head: a checkpoint where a page that starts
 * below the newest row (a cursor, `until`) enters the chain, so it walks
 * about that many newer rows, not every newer row of the key. Chosen by the
 * row's chain hash (uniform: an HMAC), so no counter is kept.
 */
export const CHECKPOINT_ONE_IN = 64;

/** True for a checkpoint row: its hash's last two hex digits below 256 / CHECKPOINT_ONE_IN. */
export function isCheckpoint(hash: string): boolean {
  return Number.parseInt(hash.slice(-2), 16) < 256 / CHECKPOINT_ONE_IN;
}

/** No link: rows without a key, or with a public id (no key span, no chain: docs/audit.md). */
const UNLINKED: KeyLink = { prev: null, spanned: false };

/**
 * The audit rows of one (scope, key), chained (schema.sql version 13): each
 * row names the previous row of its (scope, key) in `prev`, and the newest
 * is kept in the live secret's `audit_head`, or, where no secret is live, in
 * the key's newest span (`audit_span` kind 'k', whose `hi` is a row of the
 * key). A read of a secret thus moves a column of its own row instead of
 * adding a key span on a random leaf of `audit_span`, and inside a batch
 * not even that: the head is written behind with the read count
 * (tally/read-tally.ts; docs/performance.md, "Reads at scale").
 */
export class KeyChain {
  private readonly q;

  /**
   * @param db the vault's database.
   * @param tally the write-behind heads and read counts (shared with the secrets store).
   */
  constructor(
    db: Db,
    private readonly tally: ReadTally,
  ) {
    this.q = {
      liveHead: db.prepare<[string, string], { id: number; head: number | null }>(
        `SELECT s.id, ${STORED_AUDIT_HEAD} AS head FROM ${secretsWithReads()}
           WHERE s.scope = ? AND s.key = ? AND s.state IN ('active', 'sealed')`,
      ),
      setHead: db.prepare<[number, number]>("UPDATE secrets SET audit_head = ? WHERE id = ?"),
      // Spans of one key never overlap: the one starting last ends last.
      spanHead: db.prepare<[string, string], { hi: number }>(
        "SELECT hi FROM audit_span WHERE kind = 'k' AND scope = ? AND value = ? ORDER BY lo DESC LIMIT 1",
      ),
      // The key's first span starting at or above an id: a row of the key (a span's lo is one).
      spanAtOrAbove: db.prepare<[string, string, number], { lo: number }>(
        "SELECT lo FROM audit_span WHERE kind = 'k' AND scope = ? AND value = ? AND lo >= ? ORDER BY lo LIMIT 1",
      ),
      row: db.prepare<[number], AuditRow & { prev: number | null }>(`SELECT ${AUDIT_COLUMNS}, prev FROM audit WHERE id = ?`),
    };
  }

  /**
   * The newest row of a (scope, key): the live secret's head, else the
   * key's newest span's last id; null when the key has no row.
   */
  head(scope: string, key: string): { secretId: number | undefined; head: number | null } {
    const live = this.q.liveHead.get(scope, key);
    const head = (live === undefined ? null : this.tally.head(live.id, live.head)) ?? this.q.spanHead.get(scope, key)?.hi ?? null;
    return { secretId: live?.id, head };
  }

  /**
   * Links the rows of one insert (in id order, in its transaction, after
   * every change of the batch): each keyed row gets its key's previous row,
   * and each live secret of a key written gets the key's newest row as its
   * head, once per insert. Rows of a key with no live secret are marked for
   * a key span (the only place their head can be found).
   * @param seal called for each row, in order, with its link before its
   *   checkpoint is chosen: sets the row's hash, which covers the link.
   * @returns one link per row, in order.
   */
  link(rows: readonly AuditRow[], seal: (row: AuditRow, prev: number | null) => void): KeyLink[] {
    const open = new Map<string, OpenKey>();
    const links = rows.map((r): KeyLink => {
      if (!chainedKey(r.key)) {
        seal(r, null);
        return UNLINKED;
      }
      const name = `${r.scope}\u0000${r.key}`;
      let key = open.get(name);
      if (key === undefined) {
        const found = this.head(r.scope, r.key);
        key = { last: found.head, secretId: found.secretId };
        open.set(name, key);
      }
      const prev = key.last;
      key.last = r.id;
      seal(r, prev);
      return { prev, spanned: key.secretId === undefined || isCheckpoint(r.hash) };
    });
    const behind = this.tally.active;
    for (const key of open.values()) {
      if (key.secretId === undefined || key.last === null) continue;
      if (behind) this.tally.setHead(key.secretId, key.last);
      else {
        // The row is written at once: its `secret_reads` row folded into it first (tally/read-tally.ts).
        this.tally.settle(key.secretId);
        this.q.setHead.run(key.last, key.secretId);
      }
    }
    return links;
  }

  /**
   * A page of one key's rows, newest first, by the chain: from the key's
   * newest row (or, under an upper bound, from the key's first span at or
   * above it, a row of the key whose chain holds every older row) along `prev` while the rows are at or above `lo`, keeping
   * those below `hi` that `keep` accepts, until `limit`. A row without a
   * link (the oldest, or one written before schema version 13) ends the
   * walk: `rest(below, limit)` answers the rows under that id from the spans.
   */
  page(
    scope: string,
    key: string,
    bounds: { lo: number; hi: number; limit: number },
    keep: (row: AuditRow) => boolean,
    rest: (below: number, limit: number) => AuditRow[],
  ): AuditRow[] {
    const out: AuditRow[] = [];
    const entry = bounds.hi === Number.MAX_SAFE_INTEGER ? undefined : this.q.spanAtOrAbove.get(scope, key, bounds.hi)?.lo;
    let cur = entry ?? this.head(scope, key).head;
    let below = bounds.hi;
    while (cur !== null && cur >= bounds.lo && out.length < bounds.limit) {
      const found = this.q.row.get(cur);
      if (found === undefined) {
        cur = null;
        break;
      }
      const { prev, ...row } = found;
      if (row.id < bounds.hi && row.scope === scope && row.key === key && keep(row)) out.push(row);
      below = Math.min(bounds.hi, row.id);
      if (prev === null) {
        if (out.length < bounds.limit) out.push(...rest(below, bounds.limit - out.length));
        return out;
      }
      cur = prev;
    }
    // Only where no row was found at all can older rows still lie in the spans (cur < lo ends below lo).
    if (cur === null && out.length < bounds.limit && below > bounds.lo) out.push(...rest(below, bounds.limit - out.length));
    return out;
  }
}

import type { Database as Db } from "better-sqlite3";

/*
 * The table `secret_reads` (schema.sql version 15): a live secret's
 * written-back pair (read_count, audit_head), which supersedes the pair in
 * the secret's own row. Written by the read tally's write-back
 * (read-tally.ts) and by the replay after a crash (read-replay.ts); read by
 * every query of a secret's count or head, joined as below.
 */

/**
 * The secrets joined with their written-back pairs, for a FROM clause: `s`
 * the secret's row, `r` its `secret_reads` row if it has one, whose pair
 * supersedes the row's (schema.sql version 15).
 * @param index an index of `secrets` the query must use (INDEXED BY); none when omitted.
 */
export function secretsWithReads(index?: string): string {
  return `secrets AS s${index === undefined ? "" : ` INDEXED BY ${index}`} LEFT JOIN secret_reads AS r ON r.id = s.id`;
}

/** A secret's stored read count in a query FROM secretsWithReads(). */
export const STORED_READ_COUNT = "coalesce(r.read_count, s.read_count)";

/** A secret's stored audit head in a query FROM secretsWithReads() (a `secret_reads` row always has one when its secret's row has). */
export const STORED_AUDIT_HEAD = "coalesce(r.audit_head, s.audit_head)";

/** A `secret_reads` row: a secret's written-back pair. */
export interface StoredPair {
  read_count: number;
  audit_head: number | null;
}

/** The statements of `secret_reads`, prepared once per database. */
export class SecretReads {
  private readonly q;

  /** @param db the vault's database (schema version 15 or later). */
  constructor(db: Db) {
    this.q = {
      get: db.prepare<[number], StoredPair>("SELECT read_count, audit_head FROM secret_reads WHERE id = ?"),
      drop: db.prepare<[number]>("DELETE FROM secret_reads WHERE id = ?"),
      // A whole pair: no page of `secrets` is read.
      write: db.prepare<[number, number, number | null]>(
        `INSERT INTO secret_reads (id, read_count, audit_head) VALUES (?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET read_count = excluded.read_count, audit_head = excluded.audit_head`,
      ),
      // Half a pair: the other half as stored (nothing when the secret has no row).
      merge: db.prepare<[number | null, number | null, number]>(
        `INSERT INTO secret_reads (id, read_count, audit_head)
           SELECT s.id, coalesce(?, ${STORED_READ_COUNT}), coalesce(?, ${STORED_AUDIT_HEAD}) FROM ${secretsWithReads()} WHERE s.id = ?
           ON CONFLICT (id) DO UPDATE SET read_count = excluded.read_count, audit_head = excluded.audit_head`,
      ),
    };
  }

  /** Secret `id`'s `secret_reads` row, or undefined. */
  get(id: number): StoredPair | undefined {
    return this.q.get.get(id);
  }

  /** Deletes secret `id`'s `secret_reads` row, if it has one. */
  drop(id: number): void {
    this.q.drop.run(id);
  }

  /**
   * Writes secret `id`'s pair. A field given as undefined stays as stored
   * (its `secret_reads` row's, else its row's); with both given, no page of
   * `secrets` is read.
   */
  write(id: number, readCount: number | undefined, head: number | null | undefined): void {
    if (readCount !== undefined && head !== undefined) this.q.write.run(id, readCount, head);
    else this.q.merge.run(readCount ?? null, head ?? null, id);
  }
}

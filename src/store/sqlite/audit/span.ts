// The audit spans of one insert (schema.sql version 10), split from SqliteAuditStore.

/** A span's kind (schema.sql version 10): a scope's rows, a scope's rows of one action, of one key. */
export type SpanKind = "s" | "a" | "k";

/**
 * The most ids a span covers (schema.sql version 10): a batch with more rows
 * of one scope, action or key gets one span per 64 ids, so a query reads at
 * most 63 rows that do not match for each one that does, however large the
 * batch. The upgrade builds spans of the same bound.
 */
export const MAX_SPAN_IDS = 64;

/** Ids lo..hi (inclusive), at most MAX_SPAN_IDS, holding every row of one kind/scope/value in that range of one insert. */
export interface Span {
  scope: string;
  value: string;
  lo: number;
  hi: number;
}

/**
 * The spans of the rows of one insert, for one kind. Rows come in id order,
 * so an open span's hi is its last row's id.
 */
export class SpanSet {
  readonly spans: Span[] = [];
  /** The open span of each scope and value. */
  private readonly open = new Map<string, Map<string, Span>>();

  add(scope: string, value: string, id: number): void {
    let values = this.open.get(scope);
    if (values === undefined) {
      values = new Map();
      this.open.set(scope, values);
    }
    const span = values.get(value);
    if (span !== undefined && id - span.lo < MAX_SPAN_IDS) {
      span.hi = id;
    } else {
      const opened: Span = { scope, value, lo: id, hi: id };
      values.set(value, opened);
      this.spans.push(opened);
    }
  }
}

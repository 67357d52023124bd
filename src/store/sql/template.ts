/**
 * SQL written once for both engines: a tagged template that renders its
 * parameters as `?` (SQLite) or `$n` (PostgreSQL), the idea of Kysely's
 * compiler without a builder (docs/architecture.md, "SQL written once").
 *
 *   exec.get<OrgRow>(sql`SELECT ${SEQ_ALL} FROM orgs WHERE id = ${id}`)
 *
 * Every interpolated value is a bound parameter, except a Fragment: text
 * that differs between the engines (`rowid` against a `seq` column),
 * inlined as is. A call site's fragments must be constants: the rendered
 * text is cached per call site (its TemplateStringsArray) and engine, so a
 * statement is rendered once and SQLite prepares it once.
 */

/** The two SQL dialects. */
export type Dialect = "sqlite" | "pg";

/** Text inlined into a statement, per dialect (never a value from a request). */
export class Fragment {
  constructor(
    readonly sqlite: string,
    readonly pg: string,
  ) {}
}

/**
 * One statement with its values; `name`: run as a named prepared statement on
 * PostgreSQL (store/pg/batch/prepared.ts); `ordering`: declared by the
 * `ordered` tag as a statement that orders transactions (store/pg/batch/ordering.ts).
 */
export interface Query {
  readonly strings: TemplateStringsArray;
  readonly values: readonly unknown[];
  readonly name?: string | undefined;
  readonly ordering?: true | undefined;
}

/** A statement rendered for one dialect: its text and which values are bound parameters. */
export interface Rendered {
  readonly text: string;
  /** The indices of `values` that are parameters, in order; null: all of them. */
  readonly params: readonly number[] | null;
}

/** The tag: a statement whose `${values}` are bound parameters (Fragments inlined). */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Query {
  return { strings, values };
}

/**
 * The tag for a statement that orders transactions against each other on
 * PostgreSQL: it takes a row lock (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR
 * SHARE`, also through a Fragment that is empty on SQLite), an advisory lock
 * or claims with `SKIP LOCKED`. The declaration, not the text, tells the
 * PostgreSQL group commit to run the unit in a transaction of its own
 * (store/pg/batch/ordering.ts; docs/performance.md, "PostgreSQL"); SQLite
 * runs it as `sql` does.
 */
export function ordered(strings: TemplateStringsArray, ...values: unknown[]): Query {
  return { strings, values, ordering: true };
}

/**
 * A tag for a statement run as a named prepared statement on PostgreSQL
 * (parsed once per connection; SQLite prepares every statement once anyway).
 * Declare it once at module load; its text must name its columns (no `*`).
 * @throws Error when the name was declared before (prepared.ts's rule).
 */
export function named(name: string): (strings: TemplateStringsArray, ...values: unknown[]) => Query {
  if (names.has(name)) throw new Error(`prepared statement ${name} is declared twice`);
  names.add(name);
  return (strings, ...values) => ({ strings, values, name });
}

const names = new Set<string>();
const cache: Record<Dialect, WeakMap<TemplateStringsArray, Rendered>> = { sqlite: new WeakMap(), pg: new WeakMap() };

/**
 * The statement's text in `dialect`, cached per call site.
 * @returns the text and the indices of the bound values.
 */
export function render(query: Query, dialect: Dialect): Rendered {
  const hit = cache[dialect].get(query.strings);
  if (hit !== undefined) return hit;
  const { strings, values } = query;
  let text = strings[0] ?? "";
  const params: number[] = [];
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value instanceof Fragment) text += value[dialect];
    else {
      params.push(i);
      text += dialect === "pg" ? `$${params.length}` : "?";
    }
    text += strings[i + 1] ?? "";
  }
  const rendered: Rendered = { text, params: params.length === values.length ? null : params };
  cache[dialect].set(strings, rendered);
  return rendered;
}

/** The bound values of `query` as `rendered` picks them. */
export function paramsOf(query: Query, rendered: Rendered): unknown[] {
  const { values } = query;
  return rendered.params === null ? (values as unknown[]) : rendered.params.map((i) => values[i]);
}

/** `rowid AS seq, *` on SQLite, `*` on PostgreSQL (its tables have a `seq` column): a row with its creation order. */
export const SEQ_ALL = new Fragment("rowid AS seq, *", "*");
/** The creation-order column: `rowid` on SQLite, `seq` on PostgreSQL. */
export const SEQ = new Fragment("rowid", "seq");

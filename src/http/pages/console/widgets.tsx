import type { Child } from "hono/jsx";
import type { Flash } from "./session.js";
import type { ConsoleCtx, Out, Section } from "./kit.js";
import { back, Csrf, forbidden, Frame, Pager, refused, rows, takeFlash } from "./kit.js";
import type { ApiAnswer } from "./api.js";

// The pieces every console page is made of (docs/console.md): one table, one
// form of hidden fields and a button, one card form, one labelled field, one
// list call and one form action, so the pages only say what differs.

/** One column of a console table: its header, and the cell it shows for a row. */
export interface Column<R> {
  /** The column's header (`<th scope="col">`). */
  label: string;
  /** The row's cell content. */
  cell: (row: R) => Child;
  /** The cell's class (`mono`, `actions`); none when undefined. */
  class?: string;
  /** The row's own header cell (`<th scope="row">`) instead of a `<td>`. */
  rowHead?: boolean;
}

/**
 * A table of `rows` by `columns`; `empty` (when given) is shown instead of a
 * table without rows. In a scrolling `div.table-wrap` unless `bare`; a
 * `caption` is for screen readers only. Each cell carries its column's
 * label (`data-label`): on a narrow screen the stylesheet shows each row as
 * a card of labelled lines instead of columns (style.ts, docs/console.md).
 */
export function Table<R>(props: { columns: Column<R>[]; rows: R[]; empty?: Child; caption?: string; bare?: boolean }) {
  const { columns } = props;
  if (props.empty !== undefined && props.rows.length === 0) return <>{props.empty}</>;
  const table = (
    <table>
      {props.caption === undefined ? null : <caption class="sr-only">{props.caption}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            {columns.map((c) =>
              c.rowHead === true ? (
                <th scope="row" class={c.class} data-label={c.label}>
                  {c.cell(row)}
                </th>
              ) : (
                <td class={c.class} data-label={c.label}>
                  {c.cell(row)}
                </td>
              ),
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
  return props.bare === true ? table : <div class="table-wrap">{table}</div>;
}

/**
 * A POST form to console action `action` (relative to /ui/) carrying the
 * CSRF field, `fields` as hidden inputs, the children (visible inputs), and
 * one submit button `label` (`aria` names it for screen readers; `button` is
 * its class; `inline` puts the form in the line).
 */
export function PostButton(props: {
  ctx: ConsoleCtx;
  action: string;
  fields: Record<string, string>;
  label: string;
  aria?: string;
  button?: string;
  inline?: boolean;
  children?: Child;
}) {
  const { ctx } = props;
  return (
    <form method="post" action={`${ctx.root}ui/${props.action}`} class={props.inline === true ? "inline" : undefined}>
      <Csrf session={ctx.session} />
      {Object.entries(props.fields).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      {props.children}
      <button type="submit" class={props.button} aria-label={props.aria}>
        {props.label}
      </button>
    </form>
  );
}

/** A create form in a card: the heading `title`, the CSRF field, the children, and a submit button (`submit`, else `title`). */
export function CardForm(props: { ctx: ConsoleCtx; action: string; title: string; submit?: string; children?: Child }) {
  const { ctx } = props;
  return (
    <form method="post" action={`${ctx.root}ui/${props.action}`} class="card">
      <h2>{props.title}</h2>
      <Csrf session={ctx.session} />
      {props.children}
      <button type="submit">{props.submit ?? props.title}</button>
    </form>
  );
}

/**
 * A list page of the console: the frame of `section` with its flash, the
 * table (or `empty` as a warning), the pager, and the create card (its
 * heading `create`, the children its fields) posting to `<section>/create`.
 */
export function ListPage(props: {
  ctx: ConsoleCtx;
  section: Section;
  title: string;
  columns: Column<Record<string, unknown>>[];
  page: { answer: ApiAnswer; list: Record<string, unknown>[] };
  empty: string;
  create: string;
  children?: Child;
}) {
  const { ctx, section, page } = props;
  return (
    <Frame ctx={ctx} title={props.title} section={section} flash={takeFlash(ctx)}>
      <Table columns={props.columns} rows={page.list} empty={<p class="notice warn">{props.empty}</p>} />
      <Pager ctx={ctx} path={section} next={page.answer.body.next_cursor} />
      <CardForm ctx={ctx} action={`${section}/create`} title={props.create}>
        {props.children}
      </CardForm>
    </Frame>
  );
}

/** The attributes of a field's input besides its id (name first). */
export type InputAttrs = { name: string } & Record<string, string | boolean>;

/** A labelled input: `<label for=id>` then `<input id=id ...input>`. */
export function Field(props: { id: string; label: string; input: InputAttrs }) {
  return (
    <>
      <label for={props.id}>{props.label}</label>
      <input id={props.id} {...props.input} />
    </>
  );
}

/** The API path of one page of a list: `path?limit=N`, with `&cursor=` when paging on. */
export function pageQuery(path: string, limit: number, cursor: string | undefined): string {
  return `${path}?limit=${limit}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
}

/**
 * One page of an API list for a console page: `field`'s rows and the
 * answer (for its next_cursor), or the API's refusal as a 403 page of `section`.
 */
export async function fetchList(ctx: ConsoleCtx, path: string, limit: number, field: string, section: Section): Promise<{ answer: ApiAnswer; list: Record<string, unknown>[] } | Out> {
  const answer = await ctx.api("GET", pageQuery(path, limit, ctx.query.cursor));
  if (answer.status !== 200) return forbidden(ctx, answer, section);
  return { answer, list: rows(answer, field) };
}

/** What a form action asks of the API. */
export interface ActionCall {
  method: string;
  path: string;
  body?: unknown;
  /** The status that means done (200, 201, 202). */
  ok: number;
}

/** Where a form action goes after: the console page (relative to /ui/) and its section, after success and after a refusal. */
export interface ActionBack {
  back: string;
  section: Section;
}

/**
 * Runs a form action's API call: on `call.ok`, a 303 back with the flash
 * `done(answer)` makes; on a refusal, refused()'s 403 page or a 303 back
 * with the API's message.
 */
export async function act(ctx: ConsoleCtx, to: ActionBack, call: ActionCall, done: (answer: ApiAnswer) => Flash): Promise<Out> {
  const answer = await ctx.api(call.method, call.path, call.body);
  if (answer.status !== call.ok) return refused(ctx, answer, to.back, to.section);
  return back(ctx, to.back, done(answer));
}

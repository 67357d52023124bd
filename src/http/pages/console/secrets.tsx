import { PUBLIC_ID_PATTERN } from "../../../domain/secrets/model.js";
import { DURATION_FORMS, durationSeconds } from "../../../model/duration.js";
import { fill } from "../strings.js";
import { AuditTable } from "./audit-table.js";
import type { ConsoleCtx, Out, Registrar } from "./kit.js";
import type { ConsoleInfo } from "./overview.js";
import { apiMessage, back, forbidden, Frame, intField, mayOnSecrets, refused, rows, secretsBase, takeFlash, text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { act, CardForm, Field, pageQuery, PostButton, Table } from "./widgets.js";

/** Rows per page of the list. */
const PAGE = 50;
/** API pages of 1000 read at most for one view: search and sorting cover the first SCAN_PAGES * 1000 secrets (docs/console.md, "Secrets"). */
const SCAN_PAGES = 10;

type Row = Record<string, unknown>;

/** The list's sort orders and what each compares. */
const SORTS = {
  key: (a: Row, b: Row) => nameOf(a).localeCompare(nameOf(b)),
  created: (a: Row, b: Row) => Number(a.created_at) - Number(b.created_at),
  expires: (a: Row, b: Row) => (typeof a.expires_at === "number" ? a.expires_at : Infinity) - (typeof b.expires_at === "number" ? b.expires_at : Infinity),
  reads: (a: Row, b: Row) => Number(a.read_count) - Number(b.read_count),
} as const;
type SortKey = keyof typeof SORTS;

const nameOf = (row: Row) => text(row.key ?? row.id);
/** True for a public secret's row (its name is a random id; its value may be an end-to-end envelope). */
const isPublic = (row: Row) => row.key === undefined && typeof row.id === "string";
const apiPath = (ctx: ConsoleCtx, key: string) => `${secretsBase(ctx.session.caps)}/${encodeURIComponent(key)}`;
const pageLink = (ctx: ConsoleCtx, path: string, key: string) => `${ctx.root}ui/${path}?key=${encodeURIComponent(key)}`;

/** The public ids among `list`: what the one reveal-check lookup of a page is asked about. */
const publicIds = (list: Row[]) => list.filter(isPublic).map((row) => text(row.id));

/**
 * A row's Kind (docs/console.md, "Secrets"): `keyed`; for a public secret,
 * `end-to-end link` when it has a reveal check (`endToEnd` holds its id),
 * else `public`.
 */
function kindOf(ctx: ConsoleCtx, row: Row, endToEnd: ReadonlySet<string>): string {
  if (!isPublic(row)) return ctx.s.kindKeyedShort;
  return endToEnd.has(text(row.id)) ? ctx.s.kindEndToEnd : ctx.s.kindShareLink;
}

/** True when `key` names a public secret of the global scope: the console never reads one (a person's share link). */
function isShareLink(ctx: ConsoleCtx, key: string): boolean {
  return ctx.session.caps.kind !== "principal" && PUBLIC_ID_PATTERN.test(key);
}

/**
 * The secrets the token may list, up to SCAN_PAGES API pages (the API's own
 * list: a prefix-scoped key sees only its prefix), and whether more remain.
 */
async function scan(ctx: ConsoleCtx): Promise<{ list: Row[]; more: boolean } | Out> {
  const list: Row[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < SCAN_PAGES; i++) {
    const answer = await ctx.api("GET", pageQuery(secretsBase(ctx.session.caps), 1000, cursor));
    if (answer.status === 403) return forbidden(ctx, answer, "secrets");
    if (answer.status !== 200) return back(ctx, "overview", { kind: "error", text: fill(ctx.s.apiError, { error: apiMessage(answer) }) });
    for (const row of rows(answer, "secrets")) list.push(row);
    cursor = typeof answer.body.next_cursor === "string" ? answer.body.next_cursor : undefined;
    if (cursor === undefined) return { list, more: false };
  }
  return { list, more: true };
}

/**
 * `body` with the form's TTL (a duration: `90s`, `2h`, `7d`) and max reads added when filled in.
 * @returns the body, or the message saying which field is wrong.
 */
function limits(ctx: ConsoleCtx, form: Record<string, string>, body: Record<string, unknown>): Record<string, unknown> | string {
  const ttl = (form.ttl ?? "").trim();
  if (ttl !== "") {
    const seconds = durationSeconds(ttl);
    if (seconds === undefined) return fill(ctx.s.badDuration, { text: ttl, forms: DURATION_FORMS });
    body.ttl_seconds = seconds;
  }
  const reads = intField(form.max_reads);
  if (reads !== undefined) body.max_reads = reads;
  return body;
}

function reads(ctx: ConsoleCtx, row: Row): string {
  const max = row.max_reads === null ? ctx.s.unlimited : text(row.max_reads);
  return `${text(row.read_count)} / ${max}${row.state === "sealed" ? ` (${ctx.s.sealed})` : ""}`;
}

/** Reads left: a number, or null for no limit. */
function readsLeft(row: Row): number | null {
  return typeof row.max_reads === "number" ? Math.max(0, row.max_reads - Number(row.read_count)) : null;
}

/** What whoever holds a share link can still do with it, in one sentence. */
function linkHolder(ctx: ConsoleCtx, row: Row): string {
  const left = readsLeft(row);
  const until = row.expires_at === null ? "" : fill(ctx.s.linkUntil, { time: when(row.expires_at) });
  return left === null ? fill(ctx.s.linkUnlimited, { until }) : fill(ctx.s.linkOpens, { n: String(left), until });
}

/** The actions of a secret's row: details, and reveal, change and delete as the token may; a share link gets no reveal. */
function SecretActions(props: { ctx: ConsoleCtx; row: Row }) {
  const { ctx, row } = props;
  const { s } = ctx;
  const name = nameOf(row);
  const caps = ctx.session.caps;
  const share = isPublic(row);
  return (
    <>
      <a href={pageLink(ctx, "secrets/view", name)}>{s.details}<span class="sr-only">{` ${name}`}</span></a>
      {share ? <span class="help">{linkHolder(ctx, row)}</span> : null}
      {!share && mayOnSecrets(caps, "read") ? <a href={pageLink(ctx, "secrets/reveal", name)}>{`${s.reveal}`}<span class="sr-only">{` ${name}`}</span></a> : null}
      {!share && mayOnSecrets(caps, "patch") ? (
        <details>
          <summary>{s.change}<span class="sr-only">{` ${name}`}</span></summary>
          <PostButton ctx={ctx} action="secrets/patch" fields={{ key: name }} label={s.change}>
            <Field id={`ttl-${name}`} label={s.ttlLabel} input={{ name: "ttl", autocomplete: "off" }} />
            <Field id={`reads-${name}`} label={s.readsLabel} input={{ name: "max_reads", inputmode: "numeric" }} />
          </PostButton>
        </details>
      ) : null}
      {mayOnSecrets(caps, "delete") ? <a href={pageLink(ctx, "secrets/delete", name)}>{s.deleteLabel}<span class="sr-only">{` ${name}`}</span></a> : null}
    </>
  );
}

/**
 * The list's columns: key, kind, created, expires, reads, actions; the
 * sortable ones link to their sort. `endToEnd`: the public ids of the shown
 * rows that have a reveal check.
 */
function secretColumns(ctx: ConsoleCtx, endToEnd: ReadonlySet<string>): Column<Row>[] {
  const { s } = ctx;
  return [
    { label: s.colKey, rowHead: true, class: "mono", cell: (row) => nameOf(row) },
    { label: s.colKind, cell: (row) => kindOf(ctx, row, endToEnd) },
    { label: s.colCreated, cell: (row) => when(row.created_at) },
    { label: s.colExpires, cell: (row) => (row.expires_at === null ? s.never : when(row.expires_at)) },
    { label: s.colReads, cell: (row) => reads(ctx, row) },
    { label: s.colActions, class: "actions", cell: (row) => <SecretActions ctx={ctx} row={row} /> },
  ];
}

/** The TTL and max-reads fields, side by side (the create form). */
function LimitFields(props: { ctx: ConsoleCtx }) {
  const { s } = props.ctx;
  return (
    <div class="row">
      <div>
        <Field id="new-ttl" label={s.ttlLabel} input={{ name: "ttl", autocomplete: "off" }} />
      </div>
      <div>
        <Field id="new-reads" label={s.readsLabel} input={{ name: "max_reads", inputmode: "numeric" }} />
      </div>
    </div>
  );
}

function CreateForm(props: { ctx: ConsoleCtx }) {
  const { ctx } = props;
  const { s, session } = ctx;
  const org = session.caps.kind === "principal";
  return (
    <CardForm ctx={ctx} action="secrets/create" title={s.createSecret} submit={s.create}>
      {org ? null : (
        <fieldset>
          <legend>{s.kindLabel}</legend>
          <label class="choice"><input type="radio" name="kind" value="keyed" checked /> {s.kindKeyed}</label>
          <label class="choice"><input type="radio" name="kind" value="public" /> {s.kindPublic}</label>
        </fieldset>
      )}
      <Field id="new-key" label={s.keyLabel} input={{ name: "key", class: "mono", autocomplete: "off" }} />
      <label for="new-value">{s.valueLabel}</label>
      <textarea id="new-value" name="value" required autocomplete="off" spellcheck={false} />
      <LimitFields ctx={ctx} />
    </CardForm>
  );
}

/** The search and sort form of the list (GET, no script). */
function ListControls(props: { ctx: ConsoleCtx; q: string; sort: SortKey; desc: boolean }) {
  const { ctx } = props;
  const { s } = ctx;
  const labels: Record<SortKey, string> = { key: s.colKey, created: s.colCreated, expires: s.colExpires, reads: s.colReads };
  return (
    <form method="get" action={`${ctx.root}ui/secrets`} class="filter card">
      <div class="row">
        <div>
          <label for="q">{s.searchLabel}</label>
          <input id="q" name="q" value={props.q} class="mono" autocomplete="off" />
        </div>
        <div>
          <label for="sort">{s.sortLabel}</label>
          <select id="sort" name="sort">
            {(Object.keys(SORTS) as SortKey[]).map((k) => (
              <option value={k} selected={k === props.sort}>{labels[k]}</option>
            ))}
          </select>
        </div>
        <div>
          <label for="dir">{s.orderLabel}</label>
          <select id="dir" name="dir">
            <option value="asc" selected={!props.desc}>{s.ascending}</option>
            <option value="desc" selected={props.desc}>{s.descending}</option>
          </select>
        </div>
      </div>
      <button type="submit" class="secondary">{s.filter}</button>
    </form>
  );
}

/** Links to the pages of a sorted list (by offset, keeping the other query parameters). */
function OffsetPager(props: { ctx: ConsoleCtx; page: number; pages: number }) {
  const { ctx } = props;
  if (props.pages <= 1) return null;
  const link = (n: number) => {
    const params = new URLSearchParams(Object.entries(ctx.query).filter(([k]) => k !== "page"));
    if (n > 0) params.set("page", String(n));
    const q = params.toString();
    return `${ctx.root}ui/secrets${q === "" ? "" : `?${q}`}`;
  };
  return (
    <nav class="pager" aria-label="pages">
      {props.page > 0 ? <a href={link(0)}>{ctx.s.first}</a> : null}
      {props.page + 1 < props.pages ? <a href={link(props.page + 1)}>{ctx.s.next}</a> : null}
    </nav>
  );
}

/** The one secret `key` from the token's list, or the page that says why not. */
async function findSecret(ctx: ConsoleCtx, key: string): Promise<Row | Out> {
  const found = await scan(ctx);
  if (!("list" in found)) return found;
  const row = found.list.find((r) => nameOf(r) === key);
  if (row !== undefined) return row;
  return { status: 404, view: <Frame ctx={ctx} title={ctx.s.notFoundTitle} section="secrets" flash={{ kind: "error", text: fill(ctx.s.noSuchSecret, { key }) }} /> };
}

/**
 * The secrets page (docs/console.md, "Secrets"): the create form above the
 * list; metadata only, with each secret's kind, searched by substring and
 * sorted by key, created, expiry or reads, paged; a page per secret with its
 * audit history; change TTL (a duration) and reads; delete after a confirm
 * page; revealing a keyed secret is its own page whose button says it counts
 * a read. A public secret is never revealed here: its read is its link
 * holder's. Its Kind is `end-to-end link` when it has a reveal check (one
 * lookup for the shown page through `info.endToEnd`), else `public`.
 * Global for the master key and scoped keys, the org's for a principal key;
 * every other call is the API's, with the session's token.
 */
export function secretRoutes(r: Registrar, info: Pick<ConsoleInfo, "endToEnd">): void {
  r.page("secrets", async (ctx) => {
    const { s, session } = ctx;
    const caps = session.caps;
    const q = ctx.query.q ?? "";
    const sortParam = ctx.query.sort ?? "created";
    const sort: SortKey = sortParam in SORTS ? (sortParam as SortKey) : "created";
    const desc = (ctx.query.dir ?? (ctx.query.sort === undefined ? "desc" : "asc")) === "desc";
    const page = Math.max(0, Number.parseInt(ctx.query.page ?? "0", 10) || 0);
    const found = mayOnSecrets(caps, "list") ? await scan(ctx) : undefined;
    if (found !== undefined && !("list" in found)) return found;
    const title = caps.kind === "principal" ? fill(s.orgSecretsTitle, { org: text(caps.orgId) }) : s.secretsTitle;
    let shown: Row[] = [];
    let pages = 0;
    if (found !== undefined) {
      const matching = q === "" ? found.list : found.list.filter((row) => nameOf(row).includes(q));
      const cmp = SORTS[sort];
      matching.sort(desc ? (a, b) => cmp(b, a) : cmp);
      pages = Math.ceil(matching.length / PAGE);
      shown = matching.slice(page * PAGE, page * PAGE + PAGE);
    }
    const endToEnd = await info.endToEnd(publicIds(shown));
    const badSort = sortParam in SORTS ? undefined : fill(s.badSort, { sort: sortParam });
    return (
      <Frame ctx={ctx} title={title} section="secrets" flash={takeFlash(ctx)}>
        {mayOnSecrets(caps, "create") ? <CreateForm ctx={ctx} /> : null}
        {found === undefined ? (
          <p class="muted">{s.notListed}</p>
        ) : (
          <>
            <h2>{s.listTitle}</h2>
            {badSort === undefined ? null : <p class="notice error" role="alert">{badSort}</p>}
            <ListControls ctx={ctx} q={q} sort={sort} desc={desc} />
            {found.more ? <p class="notice warn">{fill(s.scanCapped, { n: String(SCAN_PAGES * 1000) })}</p> : null}
            <Table columns={secretColumns(ctx, endToEnd)} rows={shown} empty={<p class="notice warn">{q !== "" ? s.noMatch : mayOnSecrets(caps, "create") ? s.noSecrets : s.noSecretsReadOnly}</p>} />
            <OffsetPager ctx={ctx} page={page} pages={pages} />
            {caps.kind === "principal" ? null : <p class="help">{s.kindsNote}</p>}
          </>
        )}
      </Frame>
    );
  });

  r.page("secrets/view", async (ctx) => {
    const { s, root } = ctx;
    const key = ctx.query.key ?? "";
    const row = await findSecret(ctx, key);
    if (!("created_at" in row)) return row as Out;
    const left = readsLeft(row);
    const caps = ctx.session.caps;
    const share = isPublic(row);
    const endToEnd = await info.endToEnd(publicIds([row]));
    const kindNote = endToEnd.size > 0 ? s.endToEndNote : s.shareLinkNote;
    const sealOnLimit = row.delete === false;
    const nextRead = left === null ? s.nextReadKeeps : left <= 1 ? (sealOnLimit ? s.nextReadSeals : s.nextReadBurns) : fill(s.nextReadLeaves, { n: String(left - 1) });
    const auditBase = caps.kind === "principal" ? `/orgs/${encodeURIComponent(text(caps.orgId))}/audit` : "/audit";
    const audit = await ctx.api("GET", `${auditBase}?key=${encodeURIComponent(key)}&limit=100`);
    const fact = (label: string, value: string) => (
      <div>
        <dt>{label}</dt>
        <dd>{value}</dd>
      </div>
    );
    return (
      <Frame ctx={ctx} title={fill(s.secretTitle, { key })} section="secrets" flash={takeFlash(ctx)}>
        <dl class="facts">
          {fact(s.colKind, kindOf(ctx, row, endToEnd))}
          {fact(s.colCreated, when(row.created_at))}
          {fact(s.colExpires, row.expires_at === null ? s.never : when(row.expires_at))}
          {fact(s.colReads, reads(ctx, row))}
          {fact(s.readsLeftLabel, left === null ? s.unlimited : String(left))}
          {fact(s.nextReadLabel, nextRead)}
          {row.state === undefined ? null : fact(s.stateLabel, text(row.state))}
        </dl>
        {share ? <p class="notice warn">{`${kindNote} ${linkHolder(ctx, row)}`}</p> : null}
        <p>
          {!share && mayOnSecrets(caps, "read") ? <a class="button-link" href={pageLink(ctx, "secrets/reveal", key)}>{s.reveal}</a> : null}
          {mayOnSecrets(caps, "delete") ? <a class="button-link" href={pageLink(ctx, "secrets/delete", key)}>{s.deleteLabel}</a> : null}
        </p>
        <h2>{s.historyTitle}</h2>
        {audit.status === 200 ? <AuditTable s={s} entries={rows(audit, "entries")} /> : <p class="muted">{fill(s.noHistory, { error: apiMessage(audit) })}</p>}
        <p>
          <a href={`${root}ui/secrets`}>{s.back}</a>
        </p>
      </Frame>
    );
  });

  const to = { back: "secrets", section: "secrets" } as const;
  r.action("secrets/create", async (ctx, form) => {
    const body = limits(ctx, form, { value: form.value ?? "" });
    if (typeof body === "string") return back(ctx, "secrets", { kind: "error", text: body });
    if (form.kind !== "public" || ctx.session.caps.kind === "principal") body.key = form.key ?? "";
    return act(ctx, to, { method: "POST", path: secretsBase(ctx.session.caps), body, ok: 201 }, (answer) => ({
      kind: "ok",
      text:
        typeof answer.body.url === "string"
          ? fill(ctx.s.createdPublic, { key: text(answer.body.id), url: answer.body.url })
          : fill(ctx.s.created, { key: text(answer.body.key) }),
    }));
  });

  r.action("secrets/patch", async (ctx, form) => {
    const body = limits(ctx, form, {});
    if (typeof body === "string") return back(ctx, "secrets", { kind: "error", text: body });
    return act(ctx, to, { method: "PATCH", path: apiPath(ctx, form.key ?? ""), body, ok: 200 }, () => ({
      kind: "ok",
      text: fill(ctx.s.changed, { key: form.key ?? "" }),
    }));
  });

  r.page("secrets/delete", async (ctx) => {
    const { s } = ctx;
    const key = ctx.query.key ?? "";
    return (
      <Frame ctx={ctx} title={fill(s.deleteTitle, { key })} section="secrets">
        <p class="notice warn">{isShareLink(ctx, key) ? s.deleteShareWarning : s.deleteWarning}</p>
        <PostButton ctx={ctx} action="secrets/delete" fields={{ key }} label={fill(s.deleteConfirm, { key })} />
        <p>
          <a href={`${ctx.root}ui/secrets`}>{s.cancel}</a>
        </p>
      </Frame>
    );
  });

  r.action("secrets/delete", async (ctx, form) =>
    act(ctx, to, { method: "DELETE", path: apiPath(ctx, form.key ?? ""), ok: 200 }, () => ({ kind: "ok", text: fill(ctx.s.deleted, { key: form.key ?? "" }) })),
  );

  const noShareReveal = (ctx: ConsoleCtx, key: string): Out => ({
    status: 403,
    view: <Frame ctx={ctx} title={ctx.s.forbiddenTitle} section="secrets" flash={{ kind: "error", text: fill(ctx.s.noShareReveal, { key }) }} />,
  });

  r.page("secrets/reveal", async (ctx) => {
    const { s, root } = ctx;
    const key = ctx.query.key ?? "";
    if (isShareLink(ctx, key)) return noShareReveal(ctx, key);
    return (
      <Frame ctx={ctx} title={fill(s.revealTitle, { key })} section="secrets">
        <p class="notice warn">{s.revealWarning}</p>
        <PostButton ctx={ctx} action="secrets/reveal" fields={{ key }} label={s.revealConfirm} />
        <p>
          <a href={`${root}ui/secrets`}>{s.back}</a>
        </p>
      </Frame>
    );
  });

  r.action("secrets/reveal", async (ctx, form) => {
    const { s, root } = ctx;
    const key = form.key ?? "";
    // A share link's read belongs to whoever holds the link: the console never spends it.
    if (isShareLink(ctx, key)) return noShareReveal(ctx, key);
    const answer = await ctx.api("GET", apiPath(ctx, key));
    if (answer.status !== 200) return refused(ctx, answer, "secrets", "secrets");
    return (
      <Frame ctx={ctx} title={fill(s.revealTitle, { key })} section="secrets">
        <h2 class="label" id="value-label">{s.revealedLabel}</h2>
        <pre id="value" class="secret" aria-labelledby="value-label" tabindex={0}>{text(answer.body.value)}</pre>
        <button type="button" class="secondary" data-copy="value">{s.copy}</button>
        <span id="status" class="help" role="status" aria-live="polite" />
        <p>{fill(s.readsNow, { n: text(answer.body.read_count) })}</p>
        {typeof answer.body.max_reads === "number" && Number(answer.body.read_count) >= answer.body.max_reads ? (
          <p class="notice warn" role="status">{s.burnedNow}</p>
        ) : null}
        <p>
          <a href={`${root}ui/secrets`}>{s.back}</a>
        </p>
      </Frame>
    );
  });
}

import { fill } from "../strings.js";
import type { ConsoleCtx, Out, Registrar } from "./kit.js";
import { apiMessage, back, forbidden, Frame, intField, mayOnSecrets, Pager, refused, rows, secretsBase, takeFlash, text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { act, CardForm, Field, pageQuery, PostButton, Table } from "./widgets.js";

/** Rows per page of the list. */
const PAGE = 50;
/** API pages of 1000 read at most to fill one filtered page. */
const FILTER_PAGES = 20;

const nameOf = (row: Record<string, unknown>) => text(row.key ?? row.id);
const apiPath = (ctx: ConsoleCtx, key: string) => `${secretsBase(ctx.session.caps)}/${encodeURIComponent(key)}`;

/** One page of the list, filtered by key prefix (the API lists in id order; the filter reads on until a page is full). */
async function listPage(ctx: ConsoleCtx, prefix: string): Promise<{ list: Record<string, unknown>[]; next: string | undefined } | Out> {
  const out: Record<string, unknown>[] = [];
  let cursor = ctx.query.cursor;
  for (let i = 0; i < (prefix === "" ? 1 : FILTER_PAGES); i++) {
    const answer = await ctx.api("GET", pageQuery(secretsBase(ctx.session.caps), prefix === "" ? PAGE : 1000, cursor));
    if (answer.status === 403) return forbidden(ctx, answer, "secrets");
    if (answer.status !== 200) return back(ctx, "overview", { kind: "error", text: fill(ctx.s.apiError, { error: apiMessage(answer) }) });
    for (const row of rows(answer, "secrets")) if (nameOf(row).startsWith(prefix)) out.push(row);
    cursor = typeof answer.body.next_cursor === "string" ? answer.body.next_cursor : undefined;
    if (cursor === undefined || out.length >= PAGE) break;
  }
  return { list: out, next: cursor };
}

/** `body` with the form's TTL and max-reads fields added when filled in. */
function limits(form: Record<string, string>, body: Record<string, unknown>): Record<string, unknown> {
  const ttl = intField(form.ttl_seconds);
  const reads = intField(form.max_reads);
  if (ttl !== undefined) body.ttl_seconds = ttl;
  if (reads !== undefined) body.max_reads = reads;
  return body;
}

function reads(ctx: ConsoleCtx, row: Record<string, unknown>): string {
  const max = row.max_reads === null ? ctx.s.unlimited : text(row.max_reads);
  return `${text(row.read_count)} / ${max}${row.state === "sealed" ? ` (${ctx.s.sealed})` : ""}`;
}

/** The actions of a secret's row: reveal, change TTL and reads, delete (each only when the token may). */
function SecretActions(props: { ctx: ConsoleCtx; name: string }) {
  const { ctx, name } = props;
  const { s, root } = ctx;
  const caps = ctx.session.caps;
  return (
    <>
      {mayOnSecrets(caps, "read") ? <a href={`${root}ui/secrets/reveal?key=${encodeURIComponent(name)}`}>{`${s.reveal}`}<span class="sr-only">{` ${name}`}</span></a> : null}
      {mayOnSecrets(caps, "patch") ? (
        <details>
          <summary>{s.change}<span class="sr-only">{` ${name}`}</span></summary>
          <PostButton ctx={ctx} action="secrets/patch" fields={{ key: name }} label={s.change}>
            <Field id={`ttl-${name}`} label={s.ttlLabel} input={{ name: "ttl_seconds", inputmode: "numeric" }} />
            <Field id={`reads-${name}`} label={s.readsLabel} input={{ name: "max_reads", inputmode: "numeric" }} />
          </PostButton>
        </details>
      ) : null}
      {mayOnSecrets(caps, "delete") ? <PostButton ctx={ctx} action="secrets/delete" inline fields={{ key: name }} button="secondary" aria={`${s.deleteLabel} ${name}`} label={s.deleteLabel} /> : null}
    </>
  );
}

/** The list's columns: key, created, expires, reads, actions. */
function secretColumns(ctx: ConsoleCtx): Column<Record<string, unknown>>[] {
  const { s } = ctx;
  return [
    { label: s.colKey, rowHead: true, class: "mono", cell: (row) => nameOf(row) },
    { label: s.colCreated, cell: (row) => when(row.created_at) },
    { label: s.colExpires, cell: (row) => (row.expires_at === null ? s.never : when(row.expires_at)) },
    { label: s.colReads, cell: (row) => reads(ctx, row) },
    { label: s.colActions, class: "actions", cell: (row) => <SecretActions ctx={ctx} name={nameOf(row)} /> },
  ];
}

/** The TTL and max-reads fields, side by side (the create form). */
function LimitFields(props: { ctx: ConsoleCtx }) {
  const { s } = props.ctx;
  return (
    <div class="row">
      <div>
        <Field id="new-ttl" label={s.ttlLabel} input={{ name: "ttl_seconds", inputmode: "numeric" }} />
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

/**
 * The secrets page (docs/console.md, "Secrets"): metadata only, filtered by
 * key prefix and paged; create (keyed or public), change TTL and reads,
 * delete; revealing is its own page whose button says it counts a read.
 * Global for the master key and scoped keys, the org's for a principal key.
 */
export function secretRoutes(r: Registrar): void {
  r.page("secrets", async (ctx) => {
    const { s, session } = ctx;
    const caps = session.caps;
    const prefix = ctx.query.prefix ?? "";
    const page = mayOnSecrets(caps, "list") ? await listPage(ctx, prefix) : undefined;
    if (page !== undefined && !("list" in page)) return page;
    const title = caps.kind === "principal" ? fill(s.orgSecretsTitle, { org: text(caps.orgId) }) : s.secretsTitle;
    return (
      <Frame ctx={ctx} title={title} section="secrets" flash={takeFlash(ctx)}>
        {page === undefined ? (
          <p class="muted">{s.notListed}</p>
        ) : (
          <>
            <form method="get" action={`${ctx.root}ui/secrets`} class="filter">
              <label for="prefix">{s.filterPrefix}</label>
              <input id="prefix" name="prefix" value={prefix} class="mono" />
              <button type="submit" class="secondary">{s.filter}</button>
            </form>
            <Table columns={secretColumns(ctx)} rows={page.list} empty={<p class="notice warn">{s.noSecrets}</p>} />
            <Pager ctx={ctx} path="secrets" next={page.next} />
          </>
        )}
        {mayOnSecrets(caps, "create") ? <CreateForm ctx={ctx} /> : null}
      </Frame>
    );
  });

  const to = { back: "secrets", section: "secrets" } as const;
  r.action("secrets/create", async (ctx, form) => {
    const body = limits(form, { value: form.value ?? "" });
    if (form.kind !== "public" || ctx.session.caps.kind === "principal") body.key = form.key ?? "";
    return act(ctx, to, { method: "POST", path: secretsBase(ctx.session.caps), body, ok: 201 }, (answer) => ({
      kind: "ok",
      text:
        typeof answer.body.url === "string"
          ? fill(ctx.s.createdPublic, { key: text(answer.body.id), url: answer.body.url })
          : fill(ctx.s.created, { key: text(answer.body.key) }),
    }));
  });

  r.action("secrets/patch", async (ctx, form) =>
    act(ctx, to, { method: "PATCH", path: apiPath(ctx, form.key ?? ""), body: limits(form, {}), ok: 200 }, () => ({
      kind: "ok",
      text: fill(ctx.s.changed, { key: form.key ?? "" }),
    })),
  );

  r.action("secrets/delete", async (ctx, form) =>
    act(ctx, to, { method: "DELETE", path: apiPath(ctx, form.key ?? ""), ok: 200 }, () => ({ kind: "ok", text: fill(ctx.s.deleted, { key: form.key ?? "" }) })),
  );

  r.page("secrets/reveal", async (ctx) => {
    const { s, root } = ctx;
    const key = ctx.query.key ?? "";
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

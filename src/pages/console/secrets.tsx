import { fill } from "../strings.js";
import type { ConsoleCtx, Out, Registrar } from "./kit.js";
import { apiMessage, back, Csrf, forbidden, Frame, intField, mayOnSecrets, Pager, refused, rows, secretsBase, takeFlash, text, when } from "./kit.js";

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
    const q = `limit=${prefix === "" ? PAGE : 1000}${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`;
    const answer = await ctx.api("GET", `${secretsBase(ctx.session.caps)}?${q}`);
    if (answer.status === 403) return forbidden(ctx, answer, "secrets");
    if (answer.status !== 200) return back(ctx, "overview", { kind: "error", text: fill(ctx.s.apiError, { error: apiMessage(answer) }) });
    for (const row of rows(answer, "secrets")) if (nameOf(row).startsWith(prefix)) out.push(row);
    cursor = typeof answer.body.next_cursor === "string" ? answer.body.next_cursor : undefined;
    if (cursor === undefined || out.length >= PAGE) break;
  }
  return { list: out, next: cursor };
}

function reads(ctx: ConsoleCtx, row: Record<string, unknown>): string {
  const max = row.max_reads === null ? ctx.s.unlimited : text(row.max_reads);
  return `${text(row.read_count)} / ${max}${row.state === "sealed" ? ` (${ctx.s.sealed})` : ""}`;
}

function SecretRow(props: { ctx: ConsoleCtx; row: Record<string, unknown> }) {
  const { ctx, row } = props;
  const { s, root, session } = ctx;
  const name = nameOf(row);
  const caps = session.caps;
  return (
    <tr>
      <th scope="row" class="mono">{name}</th>
      <td>{when(row.created_at)}</td>
      <td>{row.expires_at === null ? s.never : when(row.expires_at)}</td>
      <td>{reads(ctx, row)}</td>
      <td class="actions">
        {mayOnSecrets(caps, "read") ? <a href={`${root}ui/secrets/reveal?key=${encodeURIComponent(name)}`}>{`${s.reveal}`}<span class="sr-only">{` ${name}`}</span></a> : null}
        {mayOnSecrets(caps, "patch") ? (
          <details>
            <summary>{s.change}<span class="sr-only">{` ${name}`}</span></summary>
            <form method="post" action={`${root}ui/secrets/patch`}>
              <Csrf session={session} />
              <input type="hidden" name="key" value={name} />
              <label for={`ttl-${name}`}>{s.ttlLabel}</label>
              <input id={`ttl-${name}`} name="ttl_seconds" inputmode="numeric" />
              <label for={`reads-${name}`}>{s.readsLabel}</label>
              <input id={`reads-${name}`} name="max_reads" inputmode="numeric" />
              <button type="submit">{s.change}</button>
            </form>
          </details>
        ) : null}
        {mayOnSecrets(caps, "delete") ? (
          <form method="post" action={`${root}ui/secrets/delete`} class="inline">
            <Csrf session={session} />
            <input type="hidden" name="key" value={name} />
            <button type="submit" class="secondary" aria-label={`${s.deleteLabel} ${name}`}>{s.deleteLabel}</button>
          </form>
        ) : null}
      </td>
    </tr>
  );
}

function CreateForm(props: { ctx: ConsoleCtx }) {
  const { s, root, session } = props.ctx;
  const org = session.caps.kind === "principal";
  return (
    <form method="post" action={`${root}ui/secrets/create`} class="card">
      <h2>{s.createSecret}</h2>
      <Csrf session={session} />
      {org ? null : (
        <fieldset>
          <legend>{s.kindLabel}</legend>
          <label class="choice"><input type="radio" name="kind" value="keyed" checked /> {s.kindKeyed}</label>
          <label class="choice"><input type="radio" name="kind" value="public" /> {s.kindPublic}</label>
        </fieldset>
      )}
      <label for="new-key">{s.keyLabel}</label>
      <input id="new-key" name="key" class="mono" autocomplete="off" />
      <label for="new-value">{s.valueLabel}</label>
      <textarea id="new-value" name="value" required autocomplete="off" spellcheck={false} />
      <div class="row">
        <div>
          <label for="new-ttl">{s.ttlLabel}</label>
          <input id="new-ttl" name="ttl_seconds" inputmode="numeric" />
        </div>
        <div>
          <label for="new-reads">{s.readsLabel}</label>
          <input id="new-reads" name="max_reads" inputmode="numeric" />
        </div>
      </div>
      <button type="submit">{s.create}</button>
    </form>
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
            {page.list.length === 0 ? (
              <p class="notice warn">{s.noSecrets}</p>
            ) : (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{s.colKey}</th>
                      <th scope="col">{s.colCreated}</th>
                      <th scope="col">{s.colExpires}</th>
                      <th scope="col">{s.colReads}</th>
                      <th scope="col">{s.colActions}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.list.map((row) => (
                      <SecretRow ctx={ctx} row={row} />
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <Pager ctx={ctx} path="secrets" next={page.next} />
          </>
        )}
        {mayOnSecrets(caps, "create") ? <CreateForm ctx={ctx} /> : null}
      </Frame>
    );
  });

  r.action("secrets/create", async (ctx, form) => {
    const body: Record<string, unknown> = { value: form.value ?? "" };
    const ttl = intField(form.ttl_seconds);
    const reads = intField(form.max_reads);
    if (ttl !== undefined) body.ttl_seconds = ttl;
    if (reads !== undefined) body.max_reads = reads;
    if (form.kind !== "public" || ctx.session.caps.kind === "principal") body.key = form.key ?? "";
    const answer = await ctx.api("POST", secretsBase(ctx.session.caps), body);
    if (answer.status !== 201) return refused(ctx, answer, "secrets", "secrets");
    const text_ =
      typeof answer.body.url === "string"
        ? fill(ctx.s.createdPublic, { key: text(answer.body.id), url: answer.body.url })
        : fill(ctx.s.created, { key: text(answer.body.key) });
    return back(ctx, "secrets", { kind: "ok", text: text_ });
  });

  r.action("secrets/patch", async (ctx, form) => {
    const body: Record<string, unknown> = {};
    const ttl = intField(form.ttl_seconds);
    const reads = intField(form.max_reads);
    if (ttl !== undefined) body.ttl_seconds = ttl;
    if (reads !== undefined) body.max_reads = reads;
    const answer = await ctx.api("PATCH", apiPath(ctx, form.key ?? ""), body);
    if (answer.status !== 200) return refused(ctx, answer, "secrets", "secrets");
    return back(ctx, "secrets", { kind: "ok", text: fill(ctx.s.changed, { key: form.key ?? "" }) });
  });

  r.action("secrets/delete", async (ctx, form) => {
    const answer = await ctx.api("DELETE", apiPath(ctx, form.key ?? ""));
    if (answer.status !== 200) return refused(ctx, answer, "secrets", "secrets");
    return back(ctx, "secrets", { kind: "ok", text: fill(ctx.s.deleted, { key: form.key ?? "" }) });
  });

  r.page("secrets/reveal", async (ctx) => {
    const { s, root, session } = ctx;
    const key = ctx.query.key ?? "";
    return (
      <Frame ctx={ctx} title={fill(s.revealTitle, { key })} section="secrets">
        <p class="notice warn">{s.revealWarning}</p>
        <form method="post" action={`${root}ui/secrets/reveal`}>
          <Csrf session={session} />
          <input type="hidden" name="key" value={key} />
          <button type="submit">{s.revealConfirm}</button>
        </form>
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

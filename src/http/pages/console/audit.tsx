import { fill } from "../strings.js";
import { AuditTable } from "./audit-table.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { forbidden, Frame, Pager, rows, takeFlash, text } from "./kit.js";
import type { ConsoleInfo } from "./overview.js";

/** Entries per page. */
const PAGE = 50;
/** Most entries an export holds. */
const EXPORT_LIMIT = 100_000;

/** `YYYY-MM-DDTHH:MM` (UTC) as Unix seconds; undefined for empty or unreadable. */
function seconds(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const ms = Date.parse(`${value.trim()}${/Z$/.test(value) ? "" : "Z"}`);
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}

/** The API query of the page's filters (action, key, since, until); the actor filter is applied to the answer. */
function apiQuery(ctx: ConsoleCtx, limit: number, cursor: string | undefined): string {
  const q = new URLSearchParams({ limit: String(limit) });
  for (const name of ["action", "key"] as const) {
    const v = (ctx.query[name] ?? "").trim();
    if (v !== "") q.set(name, v);
  }
  const since = seconds(ctx.query.since);
  const until = seconds(ctx.query.until);
  if (since !== undefined) q.set("since", String(since));
  if (until !== undefined) q.set("until", String(until));
  if (cursor !== undefined) q.set("cursor", cursor);
  return q.toString();
}

function auditBase(ctx: ConsoleCtx): string {
  const caps = ctx.session.caps;
  return caps.kind === "principal" ? `/orgs/${encodeURIComponent(text(caps.orgId))}/audit` : "/audit";
}

const actorMatches = (ctx: ConsoleCtx) => {
  const want = (ctx.query.actor ?? "").trim();
  return (e: Record<string, unknown>) => want === "" || text(e.actor ?? e.principal_id) === want;
};

/**
 * The audit page (docs/console.md, "Audit"): filters (action, key, actor,
 * time range), paging, NDJSON export, and the hash chain's state from the
 * console's incremental check (shown to the master key only; docs/console.md).
 */
export function auditRoutes(r: Registrar, info: ConsoleInfo): void {
  r.page("audit", async (ctx) => {
    const { s, root, query } = ctx;
    const answer = await ctx.api("GET", `${auditBase(ctx)}?${apiQuery(ctx, PAGE, query.cursor)}`);
    if (answer.status === 403) return forbidden(ctx, answer, "audit");
    const entries = rows(answer, "entries").filter(actorMatches(ctx));
    // The global log's state is the master key's alone: a prefix-scoped admin key does not learn its size.
    const chain = ctx.session.caps.kind === "master" && info.verifyAudit !== undefined ? await info.verifyAudit().catch((err: Error) => err) : undefined;
    const exportQuery = new URLSearchParams(Object.entries(query).filter(([k]) => k !== "cursor")).toString();
    const field = (name: string, label: string) => (
      <div>
        <label for={`f-${name}`}>{label}</label>
        <input id={`f-${name}`} name={name} value={query[name] ?? ""} class="mono" />
      </div>
    );
    return (
      <Frame ctx={ctx} title={s.auditTitle} section="audit" flash={takeFlash(ctx)}>
        {chain === undefined ? null : chain instanceof Error ? (
          <p class="notice warn">{fill(s.chainUnknown, { reason: chain.message })}</p>
        ) : chain.ok ? (
          <p class="notice ok" id="chain">{chain.rows === 0 ? s.chainEmpty : fill(s.chainIntact, { n: chain.rows })}</p>
        ) : (
          <p class="notice error" id="chain">{fill(s.chainBroken, { n: chain.at, reason: chain.reason })}</p>
        )}
        {answer.status === 200 ? null : <p class="notice error" role="alert">{fill(s.apiError, { error: text(answer.body.error) })}</p>}
        <form method="get" action={`${root}ui/audit`} class="card filter">
          <div class="row">
            {field("action", s.actionLabel)}
            {field("key", s.keyLabel)}
            {field("actor", s.actorLabel)}
          </div>
          <div class="row">
            {field("since", s.sinceLabel)}
            {field("until", s.untilLabel)}
          </div>
          <button type="submit" class="secondary">{s.filter}</button>
          <a class="button-link" href={`${root}ui/audit/export${exportQuery === "" ? "" : `?${exportQuery}`}`}>{s.exportNdjson}</a>
        </form>
        <AuditTable s={s} entries={entries} />
        <Pager ctx={ctx} path="audit" next={answer.body.next_cursor} />
      </Frame>
    );
  });

  r.page("audit/export", async (ctx) => {
    const lines: string[] = [];
    let cursor: string | undefined;
    const keep = actorMatches(ctx);
    do {
      const answer = await ctx.api("GET", `${auditBase(ctx)}?${apiQuery(ctx, 1000, cursor)}`);
      if (answer.status !== 200) return forbidden(ctx, answer, "audit");
      for (const e of rows(answer, "entries")) if (keep(e)) lines.push(JSON.stringify(e));
      cursor = typeof answer.body.next_cursor === "string" ? answer.body.next_cursor : undefined;
    } while (cursor !== undefined && lines.length < EXPORT_LIMIT);
    return new Response(lines.length === 0 ? "" : `${lines.join("\n")}\n`, {
      status: 200,
      headers: { "Content-Type": "application/x-ndjson; charset=utf-8", "Content-Disposition": 'attachment; filename="audit.ndjson"' },
    });
  });
}

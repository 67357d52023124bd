import { DURATION_FORMS, durationSeconds } from "../../../model/duration.js";
import { fill } from "../strings.js";
import { AuditTable } from "./audit-table.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { forbidden, Frame, Pager, rows, takeFlash, text } from "./kit.js";
import type { ConsoleInfo } from "./overview.js";

/** Entries per page. */
const PAGE = 50;
/** Most entries an export holds. */
const EXPORT_LIMIT = 100_000;

/**
 * A time filter as Unix seconds: a UTC date and time (`2026-01-31T09:00`,
 * `2026-01-31`) or a duration ago (`2h`, `7d`: model/duration.ts).
 * @returns undefined for empty, null for unreadable (the page says so and filters nothing).
 */
function seconds(value: string | undefined, nowMs: number): number | undefined | null {
  const v = (value ?? "").trim();
  if (v === "") return undefined;
  const ago = durationSeconds(v);
  if (ago !== undefined) return Math.max(0, Math.floor(nowMs / 1000) - ago);
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2})?)?Z?$/.test(v)) return null;
  const ms = Date.parse(`${v.replace(" ", "T")}${/Z$/.test(v) ? "" : v.length === 10 ? "T00:00Z" : "Z"}`);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/** The first of the since/until fields that is not a time, with its text; undefined when both read. */
function badTimeField(ctx: ConsoleCtx): string | undefined {
  for (const name of ["since", "until"] as const) if (seconds(ctx.query[name], ctx.now()) === null) return (ctx.query[name] ?? "").trim();
  return undefined;
}

/** The API query of the page's filters (action, key, since, until); the actor filter is applied to the answer. Call after badTimeField. */
function apiQuery(ctx: ConsoleCtx, limit: number, cursor: string | undefined): string {
  const q = new URLSearchParams({ limit: String(limit) });
  for (const name of ["action", "key"] as const) {
    const v = (ctx.query[name] ?? "").trim();
    if (v !== "") q.set(name, v);
  }
  const since = seconds(ctx.query.since, ctx.now());
  const until = seconds(ctx.query.until, ctx.now());
  if (typeof since === "number") q.set("since", String(since));
  if (typeof until === "number") q.set("until", String(until));
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
    // A time filter that is not a time is said, never dropped (which would show the unfiltered log).
    const badTime = badTimeField(ctx);
    const answer = badTime === undefined ? await ctx.api("GET", `${auditBase(ctx)}?${apiQuery(ctx, PAGE, query.cursor)}`) : { status: 400, body: {}, text: "" };
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
    const view = (
      <Frame ctx={ctx} title={s.auditTitle} section="audit" flash={takeFlash(ctx)}>
        {chain === undefined ? null : chain instanceof Error ? (
          <p class="notice warn">{fill(s.chainUnknown, { reason: chain.message })}</p>
        ) : chain.ok ? (
          <p class="notice ok" id="chain">{chain.rows === 0 ? s.chainEmpty : fill(s.chainIntact, { n: chain.rows })}</p>
        ) : (
          <p class="notice error" id="chain">{fill(s.chainBroken, { n: chain.at, reason: chain.reason })}</p>
        )}
        {badTime === undefined ? null : <p class="notice error" role="alert">{fill(s.badTime, { text: badTime, forms: DURATION_FORMS })}</p>}
        {answer.status === 200 || badTime !== undefined ? null : <p class="notice error" role="alert">{fill(s.apiError, { error: text(answer.body.error) })}</p>}
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
        {badTime === undefined ? <AuditTable s={s} entries={entries} /> : null}
        <Pager ctx={ctx} path="audit" next={answer.body.next_cursor} />
      </Frame>
    );
    return badTime === undefined ? view : { status: 400 as const, view };
  });

  r.page("audit/export", async (ctx) => {
    const lines: string[] = [];
    let cursor: string | undefined;
    const keep = actorMatches(ctx);
    const badTime = badTimeField(ctx);
    if (badTime !== undefined) {
      return new Response(`${fill(ctx.s.badTime, { text: badTime, forms: DURATION_FORMS })}\n`, { status: 400, headers: { "Content-Type": "text/plain; charset=utf-8" } });
    }
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

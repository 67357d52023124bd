import { fill } from "../strings.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { back, Csrf, forbidden, Frame, Pager, refused, rows, takeFlash, text, when } from "./kit.js";

/** Where the session's webhooks live: /webhooks, or its org's for a principal key. */
function base(ctx: ConsoleCtx): string {
  const caps = ctx.session.caps;
  return caps.kind === "principal" ? `/orgs/${encodeURIComponent(text(caps.orgId))}/webhooks` : "/webhooks";
}

function Deliveries(props: { ctx: ConsoleCtx; list: Record<string, unknown>[] }) {
  const { s } = props.ctx;
  if (props.list.length === 0) return <p class="muted">{s.noDeliveries}</p>;
  return (
    <table>
      <caption class="sr-only">{s.deliveries}</caption>
      <thead>
        <tr>
          <th scope="col">{s.colTime}</th>
          <th scope="col">{s.colType}</th>
          <th scope="col">{s.colStatus}</th>
          <th scope="col">{s.colAttempts}</th>
          <th scope="col">{s.colNextRetry}</th>
        </tr>
      </thead>
      <tbody>
        {props.list.map((d) => (
          <tr>
            <td>{when(d.at)}</td>
            <td class="mono">{text(d.type)}</td>
            <td>{`${text(d.status)}${d.http_status === null ? "" : ` (HTTP ${text(d.http_status)})`}${d.error === null ? "" : `: ${text(d.error)}`}`}</td>
            <td>{text(d.attempt)}</td>
            <td>{typeof d.next_attempt_at === "number" ? when(d.next_attempt_at) : "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The webhooks page (docs/console.md, "Webhooks"): list with each webhook's
 * recent deliveries, register (the signing secret shown once), send a
 * test event, delete;
 * global for the master key and admin keys, the org's for a principal key
 * with M.
 */
export function webhookRoutes(r: Registrar): void {
  r.page("webhooks", async (ctx) => {
    const { s, root, session } = ctx;
    const cursor = ctx.query.cursor;
    const answer = await ctx.api("GET", `${base(ctx)}?limit=25${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
    if (answer.status !== 200) return forbidden(ctx, answer, "webhooks");
    const hooks = rows(answer, "webhooks");
    const deliveries = await Promise.all(hooks.map((h) => ctx.api("GET", `${base(ctx)}/${encodeURIComponent(text(h.id))}/deliveries?limit=10`)));
    return (
      <Frame ctx={ctx} title={s.webhooksTitle} section="webhooks" flash={takeFlash(ctx)}>
        {hooks.length === 0 ? <p class="notice warn">{s.noWebhooks}</p> : null}
        {hooks.map((h, i) => (
          <section class="card">
            <h2 class="mono">{text(h.url)}</h2>
            <p>
              <span class="mono">{text(h.id)}</span> · {s.colEvents}: {Array.isArray(h.events) ? h.events.join(", ") : ""}
              {h.description === null ? "" : ` · ${text(h.description)}`}
            </p>
            <h3>{s.deliveries}</h3>
            <Deliveries ctx={ctx} list={rows(deliveries[i] ?? { status: 0, body: {}, text: "" }, "deliveries")} />
            <form method="post" action={`${root}ui/webhooks/test`} class="inline">
              <Csrf session={session} />
              <input type="hidden" name="id" value={text(h.id)} />
              <button type="submit" aria-label={`${s.sendTest}: ${text(h.url)}`}>{s.sendTest}</button>
            </form>
            <form method="post" action={`${root}ui/webhooks/delete`} class="inline">
              <Csrf session={session} />
              <input type="hidden" name="id" value={text(h.id)} />
              <button type="submit" class="secondary" aria-label={`${s.deleteLabel} ${text(h.url)}`}>{s.deleteLabel}</button>
            </form>
          </section>
        ))}
        <Pager ctx={ctx} path="webhooks" next={answer.body.next_cursor} />
        <form method="post" action={`${root}ui/webhooks/create`} class="card">
          <h2>{s.createWebhook}</h2>
          <Csrf session={session} />
          <label for="wh-url">{s.urlLabel}</label>
          <input id="wh-url" name="url" type="url" required placeholder="https://" class="mono" />
          <label for="wh-events">{s.eventsLabel}</label>
          <input id="wh-events" name="events" class="mono" />
          <label for="wh-desc">{s.descriptionLabel}</label>
          <input id="wh-desc" name="description" />
          <button type="submit">{s.createWebhook}</button>
        </form>
      </Frame>
    );
  });

  r.action("webhooks/create", async (ctx, form) => {
    const events = (form.events ?? "").split(",").map((e) => e.trim()).filter((e) => e !== "");
    const body: Record<string, unknown> = { url: (form.url ?? "").trim(), events: events.length === 0 ? ["*"] : events };
    if ((form.description ?? "").trim() !== "") body.description = form.description?.trim();
    const answer = await ctx.api("POST", base(ctx), body);
    if (answer.status !== 201) return refused(ctx, answer, "webhooks", "webhooks");
    return back(ctx, "webhooks", { kind: "ok", text: fill(ctx.s.webhookCreated, { url: text(answer.body.url) }), secret: text(answer.body.secret) });
  });

  r.action("webhooks/test", async (ctx, form) => {
    const answer = await ctx.api("POST", `${base(ctx)}/${encodeURIComponent(form.id ?? "")}/test`);
    if (answer.status !== 202) return refused(ctx, answer, "webhooks", "webhooks");
    return back(ctx, "webhooks", { kind: "ok", text: ctx.s.testSent });
  });

  r.action("webhooks/delete", async (ctx, form) => {
    const answer = await ctx.api("DELETE", `${base(ctx)}/${encodeURIComponent(form.id ?? "")}`);
    if (answer.status !== 200) return refused(ctx, answer, "webhooks", "webhooks");
    return back(ctx, "webhooks", { kind: "ok", text: ctx.s.webhookDeleted });
  });
}

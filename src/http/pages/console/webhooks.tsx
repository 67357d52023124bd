import { fill } from "../strings.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { Frame, Pager, rows, takeFlash, text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { act, CardForm, fetchList, Field, PostButton, Table } from "./widgets.js";

/** Where the session's webhooks live: /webhooks, or its org's for a principal key. */
function base(ctx: ConsoleCtx): string {
  const caps = ctx.session.caps;
  return caps.kind === "principal" ? `/orgs/${encodeURIComponent(text(caps.orgId))}/webhooks` : "/webhooks";
}

function Deliveries(props: { ctx: ConsoleCtx; list: Record<string, unknown>[] }) {
  const { s } = props.ctx;
  const columns: Column<Record<string, unknown>>[] = [
    { label: s.colTime, cell: (d) => when(d.at) },
    { label: s.colType, class: "mono", cell: (d) => text(d.type) },
    { label: s.colStatus, cell: (d) => `${text(d.status)}${d.http_status === null ? "" : ` (HTTP ${text(d.http_status)})`}${d.error === null ? "" : `: ${text(d.error)}`}` },
    { label: s.colAttempts, cell: (d) => text(d.attempt) },
    { label: s.colNextRetry, cell: (d) => (typeof d.next_attempt_at === "number" ? when(d.next_attempt_at) : "—") },
  ];
  return <Table columns={columns} rows={props.list} empty={<p class="muted">{s.noDeliveries}</p>} caption={s.deliveries} />;
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
    const { s } = ctx;
    const page = await fetchList(ctx, base(ctx), 25, "webhooks", "webhooks");
    if (!("list" in page)) return page;
    const hooks = page.list;
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
            <PostButton ctx={ctx} action="webhooks/test" inline fields={{ id: text(h.id) }} aria={`${s.sendTest}: ${text(h.url)}`} label={s.sendTest} />
            <PostButton ctx={ctx} action="webhooks/delete" inline fields={{ id: text(h.id) }} button="secondary" aria={`${s.deleteLabel} ${text(h.url)}`} label={s.deleteLabel} />
          </section>
        ))}
        <Pager ctx={ctx} path="webhooks" next={page.answer.body.next_cursor} />
        <CardForm ctx={ctx} action="webhooks/create" title={s.createWebhook}>
          <Field id="wh-url" label={s.urlLabel} input={{ name: "url", type: "url", required: true, placeholder: "https://", class: "mono" }} />
          <Field id="wh-events" label={s.eventsLabel} input={{ name: "events", class: "mono" }} />
          <Field id="wh-desc" label={s.descriptionLabel} input={{ name: "description" }} />
        </CardForm>
      </Frame>
    );
  });

  const to = { back: "webhooks", section: "webhooks" } as const;
  r.action("webhooks/create", async (ctx, form) => {
    const events = (form.events ?? "").split(",").map((e) => e.trim()).filter((e) => e !== "");
    const body: Record<string, unknown> = { url: (form.url ?? "").trim(), events: events.length === 0 ? ["*"] : events };
    if ((form.description ?? "").trim() !== "") body.description = form.description?.trim();
    return act(ctx, to, { method: "POST", path: base(ctx), body, ok: 201 }, (answer) => ({
      kind: "ok",
      text: fill(ctx.s.webhookCreated, { url: text(answer.body.url) }),
      secret: text(answer.body.secret),
    }));
  });

  r.action("webhooks/test", async (ctx, form) =>
    act(ctx, to, { method: "POST", path: `${base(ctx)}/${encodeURIComponent(form.id ?? "")}/test`, ok: 202 }, () => ({ kind: "ok", text: ctx.s.testSent })),
  );

  r.action("webhooks/delete", async (ctx, form) =>
    act(ctx, to, { method: "DELETE", path: `${base(ctx)}/${encodeURIComponent(form.id ?? "")}`, ok: 200 }, () => ({ kind: "ok", text: ctx.s.webhookDeleted })),
  );
}

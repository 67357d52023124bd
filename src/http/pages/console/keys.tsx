import { DURATION_FORMS, durationSeconds } from "../../../model/duration.js";
import { fill } from "../strings.js";
import type { Registrar } from "./kit.js";
import { back, text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { act, fetchList, Field, ListPage, PostButton } from "./widgets.js";

const PERMISSIONS = ["read", "write", "delete", "admin"] as const;

/**
 * The keys page (docs/console.md, "Keys"): scoped API keys with their last
 * use, create (the token shown once, with Copy; an expiry as a duration
 * from now, `2h`, `30d`) and revoke; the API's
 * /keys routes (admin) decide.
 */
export function keyRoutes(r: Registrar): void {
  r.page("keys", async (ctx) => {
    const { s } = ctx;
    const page = await fetchList(ctx, "/keys", 50, "keys", "keys");
    if (!("list" in page)) return page;
    const columns: Column<Record<string, unknown>>[] = [
      { label: s.colName, rowHead: true, cell: (k) => text(k.name) },
      { label: s.colId, class: "mono", cell: (k) => text(k.id) },
      { label: s.colPermissions, cell: (k) => (Array.isArray(k.permissions) ? k.permissions.join(", ") : "") },
      { label: s.colPrefix, class: "mono", cell: (k) => text(k.prefix) },
      { label: s.colLastUsed, cell: (k) => (k.last_used_at === null ? s.never : when(k.last_used_at)) },
      { label: s.colExpires, cell: (k) => (k.expires_at === null ? s.never : when(k.expires_at)) },
      {
        label: s.colActions,
        cell: (k) => <PostButton ctx={ctx} action="keys/revoke" inline fields={{ id: text(k.id) }} button="secondary" aria={`${s.revoke} ${text(k.name)}`} label={s.revoke} />,
      },
    ];
    return (
      <ListPage ctx={ctx} section="keys" title={s.keysTitle} columns={columns} page={page} empty={s.noKeys} create={s.createKey}>
        <Field id="key-name" label={s.nameLabel} input={{ name: "name", required: true, autocomplete: "off" }} />
        <fieldset>
          <legend>{s.permissionsLabel}</legend>
          {PERMISSIONS.map((p) => (
            <label class="choice">
              <input type="checkbox" name={`perm_${p}`} value="on" /> {p}
            </label>
          ))}
        </fieldset>
        <Field id="key-prefix" label={s.prefixLabel} input={{ name: "prefix", class: "mono", autocomplete: "off" }} />
        <Field id="key-expires" label={s.expiresInLabel} input={{ name: "expires_in", autocomplete: "off" }} />
      </ListPage>
    );
  });

  const to = { back: "keys", section: "keys" } as const;
  r.action("keys/create", async (ctx, form) => {
    const permissions = PERMISSIONS.filter((p) => form[`perm_${p}`] === "on");
    const prefix = (form.prefix ?? "").trim();
    const body: Record<string, unknown> = { name: form.name ?? "", permissions };
    if (prefix !== "") body.prefix = prefix;
    const expiresIn = (form.expires_in ?? "").trim();
    if (expiresIn !== "") {
      const seconds = durationSeconds(expiresIn);
      if (seconds === undefined) return back(ctx, "keys", { kind: "error", text: fill(ctx.s.badDuration, { text: expiresIn, forms: DURATION_FORMS }) });
      body.expires_at = Math.floor(ctx.now() / 1000) + seconds;
    }
    return act(ctx, to, { method: "POST", path: "/keys", body, ok: 201 }, (answer) => ({
      kind: "ok",
      text: fill(ctx.s.created, { key: text(answer.body.name) }),
      secret: text(answer.body.token),
    }));
  });

  r.action("keys/revoke", async (ctx, form) => {
    const id = form.id ?? "";
    return act(ctx, to, { method: "DELETE", path: `/keys/${encodeURIComponent(id)}`, ok: 200 }, () => ({ kind: "ok", text: fill(ctx.s.revoked, { id }) }));
  });
}

import { fill } from "../strings.js";
import type { Registrar } from "./kit.js";
import { back, Csrf, forbidden, Frame, Pager, refused, rows, takeFlash, text, when } from "./kit.js";

const PERMISSIONS = ["read", "write", "delete", "admin"] as const;

/**
 * The keys page (docs/console.md, "Keys"): scoped API keys with their last
 * use, create (the token shown once, with Copy) and revoke; the API's
 * /keys routes (admin) decide.
 */
export function keyRoutes(r: Registrar): void {
  r.page("keys", async (ctx) => {
    const { s, root, session } = ctx;
    const cursor = ctx.query.cursor;
    const answer = await ctx.api("GET", `/keys?limit=50${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
    if (answer.status !== 200) return forbidden(ctx, answer, "keys");
    const list = rows(answer, "keys");
    return (
      <Frame ctx={ctx} title={s.keysTitle} section="keys" flash={takeFlash(ctx)}>
        {list.length === 0 ? (
          <p class="notice warn">{s.noKeys}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{s.colName}</th>
                  <th scope="col">{s.colId}</th>
                  <th scope="col">{s.colPermissions}</th>
                  <th scope="col">{s.colPrefix}</th>
                  <th scope="col">{s.colLastUsed}</th>
                  <th scope="col">{s.colExpires}</th>
                  <th scope="col">{s.colActions}</th>
                </tr>
              </thead>
              <tbody>
                {list.map((k) => (
                  <tr>
                    <th scope="row">{text(k.name)}</th>
                    <td class="mono">{text(k.id)}</td>
                    <td>{Array.isArray(k.permissions) ? k.permissions.join(", ") : ""}</td>
                    <td class="mono">{text(k.prefix)}</td>
                    <td>{k.last_used_at === null ? s.never : when(k.last_used_at)}</td>
                    <td>{k.expires_at === null ? s.never : when(k.expires_at)}</td>
                    <td>
                      <form method="post" action={`${root}ui/keys/revoke`} class="inline">
                        <Csrf session={session} />
                        <input type="hidden" name="id" value={text(k.id)} />
                        <button type="submit" class="secondary" aria-label={`${s.revoke} ${text(k.name)}`}>{s.revoke}</button>
                      </form>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager ctx={ctx} path="keys" next={answer.body.next_cursor} />
        <form method="post" action={`${root}ui/keys/create`} class="card">
          <h2>{s.createKey}</h2>
          <Csrf session={session} />
          <label for="key-name">{s.nameLabel}</label>
          <input id="key-name" name="name" required autocomplete="off" />
          <fieldset>
            <legend>{s.permissionsLabel}</legend>
            {PERMISSIONS.map((p) => (
              <label class="choice">
                <input type="checkbox" name={`perm_${p}`} value="on" /> {p}
              </label>
            ))}
          </fieldset>
          <label for="key-prefix">{s.prefixLabel}</label>
          <input id="key-prefix" name="prefix" class="mono" autocomplete="off" />
          <button type="submit">{s.createKey}</button>
        </form>
      </Frame>
    );
  });

  r.action("keys/create", async (ctx, form) => {
    const permissions = PERMISSIONS.filter((p) => form[`perm_${p}`] === "on");
    const prefix = (form.prefix ?? "").trim();
    const body: Record<string, unknown> = { name: form.name ?? "", permissions };
    if (prefix !== "") body.prefix = prefix;
    const answer = await ctx.api("POST", "/keys", body);
    if (answer.status !== 201) return refused(ctx, answer, "keys", "keys");
    return back(ctx, "keys", { kind: "ok", text: fill(ctx.s.created, { key: text(answer.body.name) }), secret: text(answer.body.token) });
  });

  r.action("keys/revoke", async (ctx, form) => {
    const id = form.id ?? "";
    const answer = await ctx.api("DELETE", `/keys/${encodeURIComponent(id)}`);
    if (answer.status !== 200) return refused(ctx, answer, "keys", "keys");
    return back(ctx, "keys", { kind: "ok", text: fill(ctx.s.revoked, { id }) });
  });
}

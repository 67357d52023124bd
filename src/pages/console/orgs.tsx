import { GRANTING_LETTERS } from "../../domain/permissions.js";
import { fill } from "../strings.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { back, Csrf, forbidden, Frame, Pager, refused, rows, takeFlash, text, when } from "./kit.js";

const orgPath = (id: string) => `/orgs/${encodeURIComponent(id)}`;

/** A role's letters spelled out: each granting letter and what it grants; reserved letters said to grant nothing yet. */
function spelled(ctx: ConsoleCtx, letters: string): string {
  const grants = GRANTING_LETTERS as Record<string, string>;
  return [...letters].map((l) => `${l}: ${grants[l]?.split(" (")[0] ?? ctx.s.letterReserved}`).join("; ");
}

function PrincipalRow(props: { ctx: ConsoleCtx; org: string; p: Record<string, unknown>; keys: Record<string, unknown>[] }) {
  const { ctx, org, p, keys } = props;
  const { s, root, session } = ctx;
  const id = text(p.id);
  return (
    <tr>
      <th scope="row">{text(p.name)}</th>
      <td class="mono">{id}</td>
      <td>{text(p.role)}</td>
      <td>
        <ul class="plain">
          {keys.map((k) => (
            <li>
              <span class="mono">{text(k.id)}</span> {text(k.name)}
              <form method="post" action={`${root}ui/orgs/key-revoke`} class="inline">
                <Csrf session={session} />
                <input type="hidden" name="org" value={org} />
                <input type="hidden" name="principal" value={id} />
                <input type="hidden" name="key" value={text(k.id)} />
                <button type="submit" class="secondary small" aria-label={`${s.revoke} ${text(k.id)}`}>{s.revoke}</button>
              </form>
            </li>
          ))}
        </ul>
        <form method="post" action={`${root}ui/orgs/key-create`} class="inline">
          <Csrf session={session} />
          <input type="hidden" name="org" value={org} />
          <input type="hidden" name="principal" value={id} />
          <label class="sr-only" for={`kn-${id}`}>{`${s.nameLabel} (${text(p.name)})`}</label>
          <input id={`kn-${id}`} name="name" placeholder={s.nameLabel} required class="short" />
          <button type="submit" class="secondary small">{s.createPrincipalKey}</button>
        </form>
      </td>
      <td>
        <form method="post" action={`${root}ui/orgs/principal-delete`} class="inline">
          <Csrf session={session} />
          <input type="hidden" name="org" value={org} />
          <input type="hidden" name="principal" value={id} />
          <input type="hidden" name="name" value={text(p.name)} />
          <button type="submit" class="secondary small" aria-label={`${s.deletePrincipal} ${text(p.name)}`}>{s.deletePrincipal}</button>
        </form>
      </td>
    </tr>
  );
}

/**
 * The organizations pages (docs/console.md, "Organizations"; master key
 * only, as the API's /orgs routes): orgs, their principals, roles with
 * their letters spelled out, principal keys; create and delete, with the
 * API's refusals shown as messages.
 */
export function orgRoutes(r: Registrar): void {
  r.page("orgs", async (ctx) => {
    const { s, root, session } = ctx;
    const cursor = ctx.query.cursor;
    const answer = await ctx.api("GET", `/orgs?limit=50${cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
    if (answer.status !== 200) return forbidden(ctx, answer, "orgs");
    const list = rows(answer, "orgs");
    return (
      <Frame ctx={ctx} title={s.orgsTitle} section="orgs" flash={takeFlash(ctx)}>
        {list.length === 0 ? (
          <p class="notice warn">{s.noOrgs}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{s.colName}</th>
                  <th scope="col">{s.colId}</th>
                  <th scope="col">{s.colCreated}</th>
                </tr>
              </thead>
              <tbody>
                {list.map((o) => (
                  <tr>
                    <th scope="row">
                      <a href={`${root}ui/orgs/view?id=${encodeURIComponent(text(o.id))}`}>{text(o.name)}</a>
                    </th>
                    <td class="mono">{text(o.id)}</td>
                    <td>{when(o.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager ctx={ctx} path="orgs" next={answer.body.next_cursor} />
        <form method="post" action={`${root}ui/orgs/create`} class="card">
          <h2>{s.createOrg}</h2>
          <Csrf session={session} />
          <label for="org-name">{s.nameLabel}</label>
          <input id="org-name" name="name" required autocomplete="off" />
          <button type="submit">{s.createOrg}</button>
        </form>
      </Frame>
    );
  });

  r.page("orgs/view", async (ctx) => {
    const { s, root, session } = ctx;
    const id = ctx.query.id ?? "";
    const org = await ctx.api("GET", orgPath(id));
    if (org.status !== 200) return forbidden(ctx, org, "orgs");
    const principals = await ctx.api("GET", `${orgPath(id)}/principals?limit=100`);
    const roles = await ctx.api("GET", `${orgPath(id)}/roles?limit=100`);
    const people = rows(principals, "principals");
    const keys = await Promise.all(people.map((p) => ctx.api("GET", `${orgPath(id)}/principals/${encodeURIComponent(text(p.id))}/keys?limit=100`)));
    const roleList = rows(roles, "roles");
    return (
      <Frame ctx={ctx} title={fill(s.orgTitle, { name: text(org.body.name) })} section="orgs" flash={takeFlash(ctx)}>
        <h2>{s.principals}</h2>
        {people.length === 0 ? (
          <p class="notice warn">{s.noPrincipals}</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">{s.colName}</th>
                  <th scope="col">{s.colId}</th>
                  <th scope="col">{s.colRole}</th>
                  <th scope="col">{s.principalKeys}</th>
                  <th scope="col">{s.colActions}</th>
                </tr>
              </thead>
              <tbody>
                {people.map((p, i) => (
                  <PrincipalRow ctx={ctx} org={id} p={p} keys={rows(keys[i] ?? { status: 0, body: {}, text: "" }, "keys")} />
                ))}
              </tbody>
            </table>
          </div>
        )}
        <form method="post" action={`${root}ui/orgs/principal-create`} class="card">
          <h2>{s.createPrincipal}</h2>
          <Csrf session={session} />
          <input type="hidden" name="org" value={id} />
          <div class="row">
            <div>
              <label for="p-name">{s.nameLabel}</label>
              <input id="p-name" name="name" required autocomplete="off" />
            </div>
            <div>
              <label for="p-role">{s.roleLabel}</label>
              <select id="p-role" name="role">
                {roleList.map((role) => (
                  <option value={text(role.name)}>{text(role.name)}</option>
                ))}
              </select>
            </div>
          </div>
          <button type="submit">{s.createPrincipal}</button>
        </form>
        <h2>{s.roles}</h2>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">{s.colRole}</th>
                <th scope="col">{s.colLetters}</th>
                <th scope="col">{s.colMeaning}</th>
              </tr>
            </thead>
            <tbody>
              {roleList.map((role) => (
                <tr>
                  <th scope="row">{`${text(role.name)}${role.builtin === true ? ` (${s.builtin})` : ""}`}</th>
                  <td class="mono">{text(role.permissions)}</td>
                  <td>{spelled(ctx, text(role.permissions))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <form method="post" action={`${root}ui/orgs/delete`}>
          <Csrf session={session} />
          <input type="hidden" name="org" value={id} />
          <button type="submit" class="secondary">{s.deleteOrg}</button>
        </form>
      </Frame>
    );
  });

  const view = (org: string) => `orgs/view?id=${encodeURIComponent(org)}`;
  r.action("orgs/create", async (ctx, form) => {
    const answer = await ctx.api("POST", "/orgs", { name: form.name ?? "" });
    if (answer.status !== 201) return refused(ctx, answer, "orgs", "orgs");
    return back(ctx, view(text(answer.body.id)), { kind: "ok", text: fill(ctx.s.orgCreated, { name: text(answer.body.name) }) });
  });
  r.action("orgs/delete", async (ctx, form) => {
    const answer = await ctx.api("DELETE", orgPath(form.org ?? ""));
    if (answer.status !== 200) return refused(ctx, answer, view(form.org ?? ""), "orgs");
    return back(ctx, "orgs", { kind: "ok", text: ctx.s.orgDeleted });
  });
  r.action("orgs/principal-create", async (ctx, form) => {
    const org = form.org ?? "";
    const answer = await ctx.api("POST", `${orgPath(org)}/principals`, { name: form.name ?? "", role: form.role ?? "" });
    if (answer.status !== 201) return refused(ctx, answer, view(org), "orgs");
    return back(ctx, view(org), { kind: "ok", text: fill(ctx.s.principalCreated, { name: text(answer.body.name) }) });
  });
  r.action("orgs/principal-delete", async (ctx, form) => {
    const org = form.org ?? "";
    const answer = await ctx.api("DELETE", `${orgPath(org)}/principals/${encodeURIComponent(form.principal ?? "")}`);
    if (answer.status !== 200) return refused(ctx, answer, view(org), "orgs");
    return back(ctx, view(org), { kind: "ok", text: fill(ctx.s.principalDeleted, { name: form.name ?? "" }) });
  });
  r.action("orgs/key-create", async (ctx, form) => {
    const org = form.org ?? "";
    const answer = await ctx.api("POST", `${orgPath(org)}/principals/${encodeURIComponent(form.principal ?? "")}/keys`, { name: form.name ?? "" });
    if (answer.status !== 201) return refused(ctx, answer, view(org), "orgs");
    return back(ctx, view(org), { kind: "ok", text: fill(ctx.s.keyCreatedFor, { name: text(answer.body.name) }), secret: text(answer.body.key) });
  });
  r.action("orgs/key-revoke", async (ctx, form) => {
    const org = form.org ?? "";
    const path = `${orgPath(org)}/principals/${encodeURIComponent(form.principal ?? "")}/keys/${encodeURIComponent(form.key ?? "")}`;
    const answer = await ctx.api("DELETE", path);
    if (answer.status !== 200) return refused(ctx, answer, view(org), "orgs");
    return back(ctx, view(org), { kind: "ok", text: fill(ctx.s.revoked, { id: form.key ?? "" }) });
  });
}

import { GRANTING_LETTERS } from "../../../domain/permissions.js";
import { fill } from "../strings.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { back, forbidden, Frame, refused, rows, takeFlash, text, when } from "./kit.js";
import type { Column } from "./widgets.js";
import { act, CardForm, fetchList, Field, ListPage, PostButton, Table } from "./widgets.js";

type Row = Record<string, unknown>;

const orgPath = (id: string) => `/orgs/${encodeURIComponent(id)}`;
const principalPath = (org: string, principal: string) => `${orgPath(org)}/principals/${encodeURIComponent(principal)}`;

/** A role's letters spelled out: each granting letter and what it grants; reserved letters said to grant nothing yet. */
function spelled(ctx: ConsoleCtx, letters: string): string {
  const grants = GRANTING_LETTERS as Record<string, string>;
  return [...letters].map((l) => `${l}: ${grants[l]?.split(" (")[0] ?? ctx.s.letterReserved}`).join("; ");
}

/** A principal's keys, each with its revoke button, and the form that makes a new one. */
function PrincipalKeys(props: { ctx: ConsoleCtx; org: string; p: Row; keys: Row[] }) {
  const { ctx, org, p } = props;
  const { s } = ctx;
  const id = text(p.id);
  return (
    <>
      <ul class="plain">
        {props.keys.map((k) => (
          <li>
            <span class="mono">{text(k.id)}</span> {text(k.name)}
            <PostButton ctx={ctx} action="orgs/key-revoke" inline fields={{ org, principal: id, key: text(k.id) }} button="secondary small" aria={`${s.revoke} ${text(k.id)}`} label={s.revoke} />
          </li>
        ))}
      </ul>
      <PostButton ctx={ctx} action="orgs/key-create" inline fields={{ org, principal: id }} button="secondary small" label={s.createPrincipalKey}>
        <label class="sr-only" for={`kn-${id}`}>{`${s.nameLabel} (${text(p.name)})`}</label>
        <input id={`kn-${id}`} name="name" placeholder={s.nameLabel} required class="short" />
      </PostButton>
    </>
  );
}

/** The org page's principals table: name, id, role, keys, delete. */
function principalColumns(ctx: ConsoleCtx, org: string, keysOf: (p: Row) => Row[]): Column<Row>[] {
  const { s } = ctx;
  return [
    { label: s.colName, rowHead: true, cell: (p) => text(p.name) },
    { label: s.colId, class: "mono", cell: (p) => text(p.id) },
    { label: s.colRole, cell: (p) => text(p.role) },
    { label: s.principalKeys, cell: (p) => <PrincipalKeys ctx={ctx} org={org} p={p} keys={keysOf(p)} /> },
    {
      label: s.colActions,
      cell: (p) => (
        <>
          <PostButton ctx={ctx} action="orgs/principal-revoke" inline fields={{ org, principal: text(p.id), name: text(p.name) }} button="secondary small" aria={`${s.revokePrincipal}: ${text(p.name)}`} label={s.revokePrincipal} />
          <PostButton ctx={ctx} action="orgs/principal-delete" inline fields={{ org, principal: text(p.id), name: text(p.name) }} button="secondary small" aria={`${s.deletePrincipal} ${text(p.name)}`} label={s.deletePrincipal} />
        </>
      ),
    },
  ];
}

/**
 * The organizations pages (docs/console.md, "Organizations"; master key
 * only, as the API's /orgs routes): orgs, their principals, roles with
 * their letters spelled out, principal keys; create and delete, with the
 * API's refusals shown as messages.
 */
export function orgRoutes(r: Registrar): void {
  r.page("orgs", async (ctx) => {
    const { s, root } = ctx;
    const page = await fetchList(ctx, "/orgs", 50, "orgs", "orgs");
    if (!("list" in page)) return page;
    const columns: Column<Row>[] = [
      { label: s.colName, rowHead: true, cell: (o) => <a href={`${root}ui/orgs/view?id=${encodeURIComponent(text(o.id))}`}>{text(o.name)}</a> },
      { label: s.colId, class: "mono", cell: (o) => text(o.id) },
      { label: s.colCreated, cell: (o) => when(o.created_at) },
    ];
    return (
      <ListPage ctx={ctx} section="orgs" title={s.orgsTitle} columns={columns} page={page} empty={s.noOrgs} create={s.createOrg}>
        <Field id="org-name" label={s.nameLabel} input={{ name: "name", required: true, autocomplete: "off" }} />
      </ListPage>
    );
  });

  r.page("orgs/view", async (ctx) => {
    const { s } = ctx;
    const id = ctx.query.id ?? "";
    const org = await ctx.api("GET", orgPath(id));
    if (org.status !== 200) return forbidden(ctx, org, "orgs");
    const principals = await ctx.api("GET", `${orgPath(id)}/principals?limit=100`);
    const roles = await ctx.api("GET", `${orgPath(id)}/roles?limit=100`);
    const people = rows(principals, "principals");
    const keys = await Promise.all(people.map((p) => ctx.api("GET", `${principalPath(id, text(p.id))}/keys?limit=100`)));
    const keysOf = new Map(people.map((p, i) => [p, rows(keys[i] ?? { status: 0, body: {}, text: "" }, "keys")]));
    const roleList = rows(roles, "roles");
    const roleColumns: Column<Row>[] = [
      { label: s.colRole, rowHead: true, cell: (role) => `${text(role.name)}${role.builtin === true ? ` (${s.builtin})` : ""}` },
      { label: s.colLetters, class: "mono", cell: (role) => text(role.permissions) },
      { label: s.colMeaning, cell: (role) => spelled(ctx, text(role.permissions)) },
    ];
    return (
      <Frame ctx={ctx} title={fill(s.orgTitle, { name: text(org.body.name) })} section="orgs" flash={takeFlash(ctx)}>
        <h2>{s.principals}</h2>
        <Table columns={principalColumns(ctx, id, (p) => keysOf.get(p) ?? [])} rows={people} empty={<p class="notice warn">{s.noPrincipals}</p>} />
        <CardForm ctx={ctx} action="orgs/principal-create" title={s.createPrincipal}>
          <input type="hidden" name="org" value={id} />
          <div class="row">
            <div>
              <Field id="p-name" label={s.nameLabel} input={{ name: "name", required: true, autocomplete: "off" }} />
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
        </CardForm>
        <h2>{s.roles}</h2>
        <Table columns={roleColumns} rows={roleList} />
        <PostButton ctx={ctx} action="orgs/delete" fields={{ org: id }} button="secondary" label={s.deleteOrg} />
      </Frame>
    );
  });

  const view = (org: string) => `orgs/view?id=${encodeURIComponent(org)}`;
  /** An action on org `org` that goes back to its page. */
  const onOrg = (org: string) => ({ back: view(org), section: "orgs" as const });
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
    const call = { method: "POST", path: `${orgPath(org)}/principals`, ok: 201, body: { name: form.name ?? "", role: form.role ?? "" } };
    return act(ctx, onOrg(org), call, (answer) => ({ kind: "ok", text: fill(ctx.s.principalCreated, { name: text(answer.body.name) }) }));
  });
  r.action("orgs/principal-delete", async (ctx, form) => {
    const org = form.org ?? "";
    const call = { method: "DELETE", path: principalPath(org, form.principal ?? ""), ok: 200 };
    return act(ctx, onOrg(org), call, () => ({ kind: "ok", text: fill(ctx.s.principalDeleted, { name: form.name ?? "" }) }));
  });
  // A person revoked at once (docs/sso.md, "Leavers and changes"): every key of the principal, each its own DELETE (audited key.deleted).
  r.action("orgs/principal-revoke", async (ctx, form) => {
    const org = form.org ?? "";
    const base = principalPath(org, form.principal ?? "");
    const list = await ctx.api("GET", `${base}/keys?limit=1000`);
    if (list.status !== 200) return refused(ctx, list, view(org), "orgs");
    let count = 0;
    for (const key of rows(list, "keys")) {
      const answer = await ctx.api("DELETE", `${base}/keys/${encodeURIComponent(text(key.id))}`);
      // A key minted by a revoked one went with it (404 here).
      if (answer.status === 200) count += 1;
      else if (answer.status !== 404) return refused(ctx, answer, view(org), "orgs");
    }
    return back(ctx, view(org), { kind: "ok", text: fill(ctx.s.principalRevoked, { name: form.name ?? "", count: String(count) }) });
  });
  r.action("orgs/key-create", async (ctx, form) => {
    const org = form.org ?? "";
    const call = { method: "POST", path: `${principalPath(org, form.principal ?? "")}/keys`, ok: 201, body: { name: form.name ?? "" } };
    return act(ctx, onOrg(org), call, (answer) => ({ kind: "ok", text: fill(ctx.s.keyCreatedFor, { name: text(answer.body.name) }), secret: text(answer.body.key) }));
  });
  r.action("orgs/key-revoke", async (ctx, form) => {
    const org = form.org ?? "";
    const call = { method: "DELETE", path: `${principalPath(org, form.principal ?? "")}/keys/${encodeURIComponent(form.key ?? "")}`, ok: 200 };
    return act(ctx, onOrg(org), call, () => ({ kind: "ok", text: fill(ctx.s.revoked, { id: form.key ?? "" }) }));
  });
}

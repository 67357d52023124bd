/**
 * Every route of a resource inside an org (/orgs/{org_id}/...: the org itself,
 * its roles, principals and their keys, webhooks, secrets, audit) answers an
 * unknown org the same way, before its own input is looked up: 404
 * `organization not found`, documented as a 404 of the operation
 * (docs/orgs.md; routes/ops.ts builds most of them from one factory).
 */
import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import { createOrg } from "../../support/org-helpers.js";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

/** A value of the right shape for each path parameter but the org (a resource that does not exist). */
const PARAM_VALUES: Record<string, string> = { id: "prn_aaaaaaaaaaaaaaaaaaaaaaaaaa", key_id: "pk_aaaaaaaaaaaaaaaaaaaaaaaaaa", name: "ghost", key: "app/db" };

describe("org resources", () => {
  it("answer GET and DELETE on an unknown org 404 organization not found, as documented", async () => {
    const v = buildTestVault();
    await createOrg(v);
    const doc = (await (await v.request("GET", "/openapi.json", { token: null })).json()) as Doc;
    const checked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.startsWith("/orgs/{org_id}")) continue;
      for (const [method, operation] of Object.entries(operations)) {
        if (method !== "get" && method !== "delete") continue;
        const url = path.replace("{org_id}", "org_aaaaaaaaaaaaaaaaaaaaaaaaaa").replace(/\{(\w+)\}/g, (_m, name: string) => PARAM_VALUES[name] ?? "x");
        const res = await v.asMaster(method.toUpperCase(), url);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await res.json(), `${method} ${path}`).toEqual({ error: "organization not found" });
        expect(Object.keys(operation.responses), `${method} ${path}`).toContain("404");
        checked.push(`${method} ${path}`);
      }
    }
    expect(checked).toEqual(expect.arrayContaining(["get /orgs/{org_id}", "delete /orgs/{org_id}/roles/{name}", "get /orgs/{org_id}/principals/{id}/keys", "get /orgs/{org_id}/webhooks"]));
  });
});

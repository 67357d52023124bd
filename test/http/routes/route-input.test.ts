/**
 * Route input checked where the route is declared (src/http/routes/declare.ts):
 * the order of the answers (401, 403 and prefix scoping, then 400/413), the
 * same 400s as before for path keys, queries and bodies, query parameters
 * ignored on routes that declare none, org-route 404s in their old order;
 * and route() itself: the handler gets the schemas' typed output, and the
 * OpenAPI parameters come from the same schemas.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../../src/http/openapi.js";
import type { AppEnv } from "../../../src/http/context.js";
import { errorResponse } from "../../../src/http/errors.js";
import { invalidAs, mount, route } from "../../../src/http/routes/declare.js";
import { queryInt } from "../../../src/http/routes/input.js";
import { KEY_RULE } from "../../../src/http/routes/secrets/secret-route.js";
import { createLogger } from "../../../src/log/log.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";

async function answer(res: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A vault, a secret `team/db`, and a write+read key scoped to `team/`. */
async function prefixed(): Promise<{ v: TestVault; token: string }> {
  const v = buildTestVault();
  expect((await v.asMaster("POST", "/secrets", { key: "team/db", value: "x" })).status).toBe(201);
  const { token } = await createKey(v, { permissions: ["read", "write", "delete"], prefix: "team/" });
  return { v, token };
}

describe("the order of a route's checks", () => {
  it("401 before 403 before 400: no token, then a key without the permission, then the bad body", async () => {
    const v = buildTestVault();
    const reader = await createKey(v, { permissions: ["read"] });
    const bad = { key: "team/db", value: 5 };
    expect(await answer(await v.request("POST", "/secrets", { token: null, body: bad }))).toMatchObject({ status: 401 });
    expect(await answer(await v.request("POST", "/secrets", { token: reader.token, body: bad }))).toEqual({
      status: 403,
      body: { error: "this key lacks the write permission" },
    });
    expect(await answer(await v.asMaster("POST", "/secrets", bad))).toEqual({ status: 400, body: { error: "value must be a string" } });
  });

  it("a path key outside the prefix is 403 before its own 400 and before the body is read", async () => {
    const { v, token } = await prefixed();
    const outside = { status: 403, body: { error: "this key may act only on secrets within its prefix" } };
    expect(await answer(await v.request("GET", "/secrets/other/./x", { token }))).toEqual(outside);
    expect(await answer(await v.request("PATCH", "/secrets/other/db", { token, raw: "{not json", contentType: "application/json" }))).toEqual(outside);
    expect(await answer(await v.request("PUT", "/secrets/other/db", { token, raw: "[]", contentType: "text/plain" }))).toEqual(outside);
    // A public id is out of any prefix's reach, whatever follows.
    expect(await answer(await v.request("DELETE", `/secrets/${"a".repeat(64)}`, { token }))).toEqual(outside);
  });

  it("a path key inside the prefix that breaks the key rule: 400 invalid secret key, the rule as message, before the body", async () => {
    const { v, token } = await prefixed();
    const invalid = { status: 400, body: { error: "invalid secret key", message: KEY_RULE } };
    expect(await answer(await v.request("GET", "/secrets/team/", { token }))).toEqual(invalid);
    expect(await answer(await v.request("PATCH", "/secrets/team/a%20b", { token, raw: "{not json", contentType: "application/json" }))).toEqual(invalid);
    expect(await answer(await v.asMaster("PUT", "/orgs/org_x/secrets/a%20b", { value: 5 }))).toEqual(invalid);
  });

  it("POST /secrets reads the body first (400/413), then the prefix of its key (403), then validates it (400)", async () => {
    const { v, token } = await prefixed();
    expect(await answer(await v.request("POST", "/secrets", { token, raw: "{not json", contentType: "application/json" }))).toEqual({
      status: 400,
      body: { error: "body is not valid JSON" },
    });
    // Outside the prefix, even with a value that would be refused.
    expect(await answer(await v.request("POST", "/secrets", { token, body: { key: "other/x", value: 5 } }))).toMatchObject({ status: 403 });
    // No key: a public secret, never within a prefix.
    expect(await answer(await v.request("POST", "/secrets", { token, body: { value: "x" } }))).toMatchObject({ status: 403 });
    // A key that is no string is left to validation.
    expect(await answer(await v.request("POST", "/secrets", { token, body: { key: 7, value: "x" } }))).toEqual({
      status: 400,
      body: { error: "key must be a string" },
    });
    expect(await answer(await v.request("POST", "/secrets", { token, body: { key: "team/new", value: "x", ttl_seconds: 0 } }))).toEqual({
      status: 400,
      body: { error: "ttl_seconds must be an integer from 1 to 315360000" },
    });
  });
});

describe("query parameters", () => {
  it("are checked on the routes that declare them, with the same messages", async () => {
    const v = buildTestVault();
    const limit = { status: 400, body: { error: "limit must be an integer from 1 to 1000" } };
    for (const path of ["/secrets?limit=0", "/keys?limit=x", "/orgs?limit=1001", "/audit?limit=0"]) {
      expect(await answer(await v.asMaster("GET", path)), path).toEqual(limit);
    }
    expect(await answer(await v.asMaster("GET", "/audit?until=soon"))).toEqual({
      status: 400,
      body: { error: "until must be an integer from 0 to 253402300799" },
    });
    expect(await answer(await v.asMaster("GET", "/audit?action=Secret.Read"))).toEqual({
      status: 400,
      body: { error: "action must be an action name such as secret.read" },
    });
    expect(await answer(await v.asMaster("GET", "/secrets?cursor=nope"))).toEqual({ status: 400, body: { error: "cursor is not valid" } });
    // Unknown parameters are ignored.
    expect((await v.asMaster("GET", "/secrets?colour=blue")).status).toBe(200);
  });

  it("are ignored on routes that declare none", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "x" });
    expect((await v.asMaster("GET", "/secrets/a?limit=0&cursor=bad")).status).toBe(200);
    expect(await answer(await v.asMaster("DELETE", "/keys/sk_missing?limit=x"))).toEqual({ status: 404, body: { error: "key not found" } });
    expect((await v.asMaster("GET", "/me?limit=0")).status).toBe(403);
  });

  it("every paged list answers a bad limit the same way, org and /me routes included", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const org = (await (await v.asMaster("POST", "/orgs", { name: "Acme" })).json()) as { id: string };
    const p = (await (await v.asMaster("POST", `/orgs/${org.id}/principals`, { name: "ci", role: "reader" })).json()) as { id: string };
    const key = (await (await v.asMaster("POST", `/orgs/${org.id}/principals/${p.id}/keys`, { name: "k" })).json()) as { key: string };
    const hook = (await (await v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1:9/x", events: ["*"] })).json()) as { id: string };
    const limit = { status: 400, body: { error: "limit must be an integer from 1 to 1000" } };
    const paths = ["/orgs", "/webhooks", `/webhooks/${hook.id}/deliveries`, `/orgs/${org.id}/secrets`, `/orgs/${org.id}/roles`, `/orgs/${org.id}/principals`];
    for (const path of [...paths, `/orgs/${org.id}/principals/${p.id}/keys`, `/orgs/${org.id}/webhooks`]) {
      expect(await answer(await v.asMaster("GET", `${path}?limit=-1`)), path).toEqual(limit);
    }
    expect(await answer(await v.request("GET", "/me/keys?limit=1.5", { token: key.key }))).toEqual(limit);
  });

  it("the query of an org route is checked before the org is looked up (400 before 404)", async () => {
    const v = buildTestVault();
    expect(await answer(await v.asMaster("GET", "/orgs/org_none/audit?limit=0"))).toEqual({
      status: 400,
      body: { error: "limit must be an integer from 1 to 1000" },
    });
    expect(await answer(await v.asMaster("GET", "/orgs/org_none/audit"))).toEqual({ status: 404, body: { error: "organization not found" } });
  });
});

describe("ids in org paths", () => {
  it("an unknown org is 404 before an id of the wrong shape is", async () => {
    const v = buildTestVault({ webhooks: { allowPrivate: true } });
    const noOrg = { status: 404, body: { error: "organization not found" } };
    expect(await answer(await v.asMaster("DELETE", "/orgs/org_none/webhooks/not-a-webhook-id"))).toEqual(noOrg);
    expect(await answer(await v.asMaster("GET", "/orgs/org_none/principals/bad!id"))).toEqual(noOrg);
    expect(await answer(await v.asMaster("DELETE", "/orgs/org_none/roles/Bad-Name"))).toEqual(noOrg);
    const org = (await (await v.asMaster("POST", "/orgs", { name: "Acme" })).json()) as { id: string };
    expect(await answer(await v.asMaster("DELETE", `/orgs/${org.id}/webhooks/not-a-webhook-id`))).toEqual({
      status: 404,
      body: { error: "webhook not found" },
    });
    expect(await answer(await v.asMaster("GET", `/orgs/${org.id}/principals/bad!id`))).toEqual({ status: 404, body: { error: "principal not found" } });
    expect(await answer(await v.asMaster("DELETE", `/orgs/${org.id}/roles/Bad-Name`))).toEqual({ status: 404, body: { error: "role not found" } });
  });
});

describe("route()", () => {
  const probe = route({
    method: "post",
    path: "/probe/:id",
    summary: "a probe",
    permission: "none",
    params: v.object({ id: invalidAs("invalid id", v.pipe(v.string(), v.regex(/^p\d+$/, "id must be p and digits"), v.description("the probe's id"))) }),
    query: v.object({ n: v.optional(v.pipe(queryInt("n", 1, 5), v.description("how many"))), tag: v.string() }),
    body: v.object({ size: v.pipe(v.number("size must be a number"), v.transform((s) => s * 2)) }),
    responses: { 200: { description: "what the handler got", schema: v.object({ n: v.nullable(v.number()) }) } },
    handler: (c, { params, query, body }) => {
      // Typed from the schemas: n a number (transformed), size doubled, id and tag strings.
      const n: number | undefined = query.n;
      const size: number = body.size;
      return c.json({ id: params.id, n: n ?? null, nType: typeof n, tag: query.tag, size });
    },
  });
  const app = new Hono<AppEnv>();
  mount(app, [probe]);
  app.onError((err, c) => errorResponse(err, c, createLogger("silent")));
  const post = (path: string, body: string) => app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body });

  it("hands the handler the schemas' output", async () => {
    expect(await answer(await post("/probe/p7?n=3&tag=x", '{"size": 4}'))).toEqual({
      status: 200,
      body: { id: "p7", n: 3, nType: "number", tag: "x", size: 8 },
    });
  });

  it("answers params, then query, then body faults with parse()'s 400s", async () => {
    expect(await answer(await post("/probe/q7?n=9", "{not json"))).toEqual({
      status: 400,
      body: { error: "invalid id", message: "id must be p and digits" },
    });
    expect(await answer(await post("/probe/p7?n=9&tag=x", "{not json"))).toEqual({ status: 400, body: { error: "n must be an integer from 1 to 5" } });
    expect(await answer(await post("/probe/p7?tag=x", "{not json"))).toEqual({ status: 400, body: { error: "body is not valid JSON" } });
    expect(await answer(await post("/probe/p7?tag=x", '{"size": "big"}'))).toEqual({ status: 400, body: { error: "size must be a number" } });
  });

  it("documents the parameters from the same schemas", () => {
    const doc = buildOpenApi("test", [probe]) as { paths: Record<string, Record<string, { parameters: unknown[] }>> };
    expect(doc.paths["/probe/{id}"]?.post?.parameters).toEqual([
      { name: "id", in: "path", required: true, description: "the probe's id", schema: { type: "string", pattern: "^p\\d+$" } },
      { name: "n", in: "query", required: false, description: "how many", schema: { type: "string", pattern: "^\\d{1,16}$" } },
      { name: "tag", in: "query", required: true, schema: { type: "string" } },
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../../src/http/routes/declare.js";
import { buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../support/org-helpers.js";

/**
 * Deeply nested JSON bodies (docs/api.md): every JSON-body route answers 400
 * with a clear error past MAX_JSON_DEPTH levels, never a 500 from a stack
 * overflow in a recursive walk, and creates nothing.
 */

/** `{"value": [[[...]]]}` with `depth` nested arrays as the value, as raw JSON text. */
function nestedArrays(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}

/** `{"a":{"a":...{}}}` with `depth` nested objects, as raw JSON text. */
function nestedObjects(depth: number): string {
  return '{"a":'.repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}

/** Sends a raw JSON body; returns status and parsed answer. */
async function send(v: TestVault, method: string, path: string, raw: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await v.request(method, path, { raw, contentType: "application/json", ...(token === undefined ? {} : { token }) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The routes with a JSON body, each with a body template whose `%` is replaced by the nested value. */
interface BodyRoute {
  what: string;
  method: string;
  path: (orgId: string) => string;
  template: string;
  /** The principal's token rather than the master key (PATCH /me). */
  asPrincipal?: boolean;
}

const ROUTES: BodyRoute[] = [
  { what: "global secret value", method: "POST", path: () => "/secrets", template: '{"key":"k","value":%}' },
  { what: "global secret, an unknown field", method: "POST", path: () => "/secrets", template: '{"key":"k","value":"v","extra":%}' },
  { what: "org secret value", method: "POST", path: (o) => `/orgs/${o}/secrets`, template: '{"key":"k","value":%}' },
  { what: "scoped key permissions", method: "POST", path: () => "/keys", template: '{"name":"n","permissions":%}' },
  { what: "org metadata", method: "POST", path: () => "/orgs", template: '{"name":"deep","metadata":{"m":%}}' },
  { what: "me metadata", method: "PATCH", path: () => "/me", template: '{"metadata":{"m":%}}', asPrincipal: true },
  { what: "global webhook events", method: "POST", path: () => "/webhooks", template: '{"url":"https://example.com/h","events":%}' },
  { what: "org webhook events", method: "POST", path: (o) => `/orgs/${o}/webhooks`, template: '{"url":"https://example.com/h","events":%}' },
];

/** What each route family holds, to check that a refused body created or changed nothing. */
async function state(v: TestVault, orgId: string, token: string): Promise<unknown[]> {
  return Promise.all([
    expectStatus(v.asMaster("GET", "/secrets"), 200),
    expectStatus(v.asMaster("GET", `/orgs/${orgId}/secrets`), 200),
    expectStatus(v.asMaster("GET", "/keys"), 200),
    expectStatus(v.asMaster("GET", "/orgs"), 200),
    expectStatus(v.request("GET", "/me", { token }), 200),
    expectStatus(v.asMaster("GET", "/webhooks"), 200),
    expectStatus(v.asMaster("GET", `/orgs/${orgId}/webhooks`), 200),
  ]);
}

describe("deeply nested JSON bodies", () => {
  it.each([
    ["10,000 nested arrays", nestedArrays(10_000)],
    ["100,000 nested objects", nestedObjects(100_000)],
  ])("%s: 400 with a clear error on every JSON-body route, nothing created", async (_what, nested) => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "owner");
    const before = await state(v, orgId, p.token);
    for (const route of ROUTES) {
      const raw = route.template.replace("%", nested);
      const res = await send(v, route.method, route.path(orgId), raw, route.asPrincipal ? p.token : undefined);
      expect(res.status, route.what).toBe(400);
      expect(res.body.error, route.what).toBe(`body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`);
    }
    expect(await state(v, orgId, p.token)).toEqual(before);
  });

  it(`accepts ${MAX_JSON_DEPTH} levels (the body object counting as one) and refuses one more`, async () => {
    const v = buildTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "owner");
    // {"metadata": {...}}: the body and metadata are two levels, the rest nested objects.
    const fits = `{"metadata":${nestedObjects(MAX_JSON_DEPTH - 1)}}`;
    const over = `{"metadata":${nestedObjects(MAX_JSON_DEPTH)}}`;
    expect((await send(v, "PATCH", "/me", over, p.token)).status).toBe(400);
    expect((await send(v, "PATCH", "/me", fits, p.token)).status).toBe(200);
    const me = await expectStatus(v.request("GET", "/me", { token: p.token }), 200);
    expect(me.metadata).toEqual(JSON.parse(nestedObjects(MAX_JSON_DEPTH - 1)));
  });

  it("still finds a lone surrogate deep inside a body (iterative walk)", async () => {
    const v = buildTestVault();
    const raw = `{"key":"k","value":"v","extra":${"[".repeat(MAX_JSON_DEPTH - 1)}"\\ud800"${"]".repeat(MAX_JSON_DEPTH - 1)}}`;
    const res = await send(v, "POST", "/secrets", raw);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/lone surrogate/);
    expect((await v.asMaster("GET", "/secrets/k")).status).toBe(404);
  });
});

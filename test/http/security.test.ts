/**
 * The table-driven security suite (docs/contract.md §8): every documented
 * route of the running app, taken from its own OpenAPI document (the
 * `x-permission` of each operation is the route table), is called with no
 * token, a malformed header, a wrong token, a deleted key and an expired key
 * (401), and with every scoped key that lacks its permission (403). A route
 * added later is covered without editing this file.
 */
import { describe, expect, it } from "vitest";
import { buildTestVault, createKey } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

interface Route {
  method: string;
  /** A concrete path: placeholders filled with plausible values. */
  path: string;
  permission: string;
}

const PLACEHOLDERS: Record<string, string> = {
  key: "team/some-secret",
  id: "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa",
  org_id: "org_aaaaaaaaaaaaaaaaaaaaaaaaaa",
  name: "custom-role",
  key_id: "pk_aaaaaaaaaaaaaaaaaaaaaaaaaa",
};

/** The routes of the app's OpenAPI document, built without HTTP so describe() can use them. */
async function documentedRoutes(): Promise<Route[]> {
  const v = buildTestVault();
  const res = await v.request("GET", "/openapi.json", { token: null });
  const doc = (await res.json()) as { paths: Record<string, Record<string, { "x-permission"?: string }>> };
  const routes: Route[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => PLACEHOLDERS[name] ?? "x");
    for (const [method, operation] of Object.entries(operations)) {
      const permission = operation["x-permission"];
      if (permission === undefined) continue; // no token needed (/health, /openapi.json)
      routes.push({ method: method.toUpperCase(), path, permission });
      // Hono answers HEAD with the GET handler: HEAD is guarded like GET.
      if (method === "get") routes.push({ method: "HEAD", path, permission });
    }
  }
  return routes;
}

const routes = await documentedRoutes();
type Scoped = "read" | "write" | "delete" | "admin";

/**
 * The oracle, written from docs/contract.md §8 and not from the code
 * under test: scoped keys may call only global endpoints (never /orgs* or
 * /me*); `read` GET (and HEAD), `write` POST, PUT (replace) and PATCH, `delete` DELETE;
 * `admin` everything, and alone the list, prune, audit, webhooks and keys.
 */
function scopedNeed(method: string, path: string): Scoped | "never" {
  if (path.startsWith("/orgs") || path.startsWith("/me")) return "never";
  if (path === "/secrets" && (method === "GET" || method === "HEAD")) return "admin";
  if (path === "/prune" || path === "/audit" || path.startsWith("/keys") || path.startsWith("/webhooks")) return "admin";
  if (method === "GET" || method === "HEAD") return "read";
  if (method === "POST" || method === "PUT" || method === "PATCH") return "write";
  if (method === "DELETE") return "delete";
  return "never";
}

/** docs/contract.md §8: a key holds what it lists, and `admin` holds everything. */
function oracleAllows(shape: readonly Scoped[], method: string, path: string): boolean {
  const need = scopedNeed(method, path);
  return need !== "never" && (shape.includes("admin") || shape.includes(need));
}

/** Every scoped key shape the suite tries: each single permission and the non-admin trio. */
const KEY_SHAPES: Scoped[][] = [["read"], ["write"], ["delete"], ["admin"], ["read", "write", "delete"]];

async function latestAudit(v: TestVault) {
  const res = await v.asMaster("GET", "/audit?limit=1");
  return ((await res.json()) as { entries: { action: string; actor: string | null }[] }).entries[0];
}

describe("every route refuses a caller without a valid token (401)", () => {
  it("covers the routes of the whole interface", () => {
    const paths = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const expected of ["POST /secrets", "GET /secrets", "DELETE /secrets/team/some-secret", "POST /keys", "GET /audit"]) {
      expect(paths.has(expected), expected).toBe(true);
    }
  });

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))("%s", async (_name, route) => {
    const v = buildTestVault();
    const deleted = await createKey(v, { permissions: ["admin"] });
    await v.asMaster("DELETE", `/keys/${deleted.id}`);
    const expired = await createKey(v, { permissions: ["admin"], expires_at: Math.floor(v.clock.now() / 1000) + 1 });
    v.clock.advance(1_000);

    const attempts: [string, Record<string, string>, string | null][] = [
      ["no token", {}, null],
      ["a malformed header", { authorization: "Basic dXNlcjpwYXNz" }, null],
      ["a wrong token", {}, "not-the-master-key-0123456789"],
      ["a wrong vsk_ token", {}, `vsk_${"A".repeat(43)}`],
      ["a deleted key", {}, deleted.token],
      ["an expired key", {}, expired.token],
    ];
    for (const [what, headers, token] of attempts) {
      const res = await v.request(route.method, route.path, { token, headers });
      expect(res.status, what).toBe(401);
      if (route.method !== "HEAD") expect(Object.keys((await res.json()) as object), what).toEqual(["error"]);
      expect(await latestAudit(v), what).toMatchObject({ action: "auth.failed", actor: null });
    }
  });
});

describe("every route refuses a scoped key without its permission (403)", () => {
  it.each(routes.map((r) => [`${r.method} ${r.path} [${r.permission}]`, r] as const))("%s", async (_name, route) => {
    const v = buildTestVault();
    for (const shape of KEY_SHAPES) {
      const what = `with ${shape.join("+")}`;
      // Global routes: the oracle above decides. Org, /me and
      // management routes: no scoped key at all (docs/contract.md §8).
      const allowed = oracleAllows(shape, route.method, route.path);
      const key = await createKey(v, { permissions: shape });
      const res = await v.request(route.method, route.path, { token: key.token });
      if (allowed) {
        // Past authorization: whatever the input makes of it, never 401 or 403.
        expect([401, 403], what).not.toContain(res.status);
      } else {
        expect(res.status, what).toBe(403);
        if (route.method !== "HEAD") expect(Object.keys((await res.json()) as object), what).toEqual(["error"]);
        expect(await latestAudit(v), what).toMatchObject({ action: "auth.denied", actor: key.id });
      }
    }
  });

  it("lets the master key past authorization on every route but /me (principal keys only)", async () => {
    const v = buildTestVault();
    for (const route of routes) {
      if (route.permission === "principal") {
        expect((await v.request(route.method, route.path)).status, `${route.method} ${route.path}`).toBe(403);
        continue;
      }
      const res = await v.request(route.method, route.path);
      expect([401, 403], `${route.method} ${route.path}`).not.toContain(res.status);
    }
  });
});

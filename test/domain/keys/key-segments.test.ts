import { describe, expect, it } from "vitest";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, expectStatus } from "../../support/org-helpers.js";

/**
 * A secret key may not end with `/` or hold an empty, `.` or `..` segment
 * (docs/api.md "Global secrets"): such a key would name another route once a
 * client joins it into a path (fetch's URL parser resolves `..`, `%2e%2e`
 * and `.%2E` segments). Refused with 400 on create and on every path form,
 * in both scopes, after 401 and 403; scoped-key prefixes follow the same
 * segment rule.
 */

/** Keys with a segment that would leave their route, or end with `/`. */
const BAD_KEYS = ["prod/../x", "prod/./x", "prod//x", "prod/x/", "..", ".", "prod/..", "../x", "./x", "a/b/../../keys/sk_x"];

/**
 * Literal request paths (after the scope's base) whose `:key` decodes to a
 * key with a dot or empty segment: `%2F` keeps the segments inside the
 * route, and `%2e`/`%2E` decode to dots only after the URL parser has run.
 */
const BAD_PATHS = [
  "prod%2F..%2Fx",
  "prod%2F%2e%2e%2Fx",
  "prod%2F%2E%2e%2Fx",
  "prod%2F.%2E%2Fx",
  "prod%2F.%2Fx",
  "prod%2F%2e%2Fx",
  "prod//x",
  "prod%2F%2Fx",
  "prod/x/",
  "prod%2Fx%2F",
  "..%2Fx",
  "%2e%2e%2Fx",
  "prod%2F..",
  "prod%2F%2e%2e",
];

const METHODS = ["GET", "HEAD", "PUT", "PATCH", "DELETE"] as const;

/** Valid bodies, so that only the key is wrong. */
const BODIES: Partial<Record<(typeof METHODS)[number], unknown>> = { PATCH: { max_reads: 3 }, PUT: { value: "v" } };

/** Sends `method` to `path` with the master key (PUT and PATCH with a valid body). */
function send(v: TestVault, method: (typeof METHODS)[number], path: string, token?: string): Promise<Response> {
  const body = BODIES[method];
  return v.request(method, path, { ...(token === undefined ? {} : { token }), ...(body === undefined ? {} : { body }) });
}

describe.each([
  { scope: "global", base: async (_v: TestVault) => "/secrets" },
  { scope: "org", base: async (v: TestVault) => `/orgs/${await createOrg(v)}/secrets` },
])("$scope secret keys with an empty, . or .. segment", ({ base }) => {
  it("are refused on create with 400, a message that does not echo the key, and nothing stored", async () => {
    const v = buildTestVault();
    const path = await base(v);
    for (const key of BAD_KEYS) {
      const res = await v.asMaster("POST", path, { key, value: "v" });
      const body = await expectStatus(res, 400);
      expect(typeof body.error, key).toBe("string");
      expect(JSON.stringify(body), key).not.toContain(key.length > 2 ? key : `"${key}"`);
      expect(String(body.error)).toMatch(/segment/);
    }
    const listed = await expectStatus(v.asMaster("GET", path), 200);
    expect(listed.secrets).toEqual([]);
  });

  it("are refused with 400 on GET, HEAD, PUT, PATCH and DELETE of the literal path forms", async () => {
    const v = buildTestVault();
    const path = await base(v);
    for (const method of METHODS) {
      for (const form of BAD_PATHS) {
        const res = await send(v, method, `${path}/${form}`);
        expect(res.status, `${method} ${form}`).toBe(400);
        if (method !== "HEAD") {
          const body = (await res.json()) as Record<string, unknown>;
          expect(body.error, `${method} ${form}`).toBe("invalid secret key");
          expect(JSON.stringify(body)).not.toContain("prod");
          expect(JSON.stringify(body)).not.toContain("../x");
        }
      }
    }
  });

  it("still accepts keys whose segments only contain dots among other characters", async () => {
    const v = buildTestVault();
    const path = await base(v);
    for (const key of ["prod/.env", "prod/..x", "prod/...", "a.b/c..d", "x.", "~/.ssh/id_ed25519"]) {
      await expectStatus(v.asMaster("POST", path, { key, value: `value of ${key}` }), 201);
      const read = await expectStatus(v.asMaster("GET", `${path}/${key}`), 200);
      expect(read).toMatchObject({ key, value: `value of ${key}` });
    }
  });
});

describe("order of checks and scoped keys", () => {
  it("a write-only prod/ key cannot create prod/../other/x (400), and nothing is stored", async () => {
    const v = buildTestVault();
    const writer = await createKey(v, { permissions: ["write"], prefix: "prod/" });
    const res = await v.request("POST", "/secrets", { token: writer.token, body: { key: "prod/../other/x", value: "v" } });
    await expectStatus(res, 400);
    expect(((await expectStatus(v.asMaster("GET", "/secrets"), 200)).secrets as unknown[]).length).toBe(0);
    expect((await v.asMaster("GET", "/secrets/other/x")).status).toBe(404);
  });

  it("answers 401 without a token and 403 outside the prefix or without the permission, before 400", async () => {
    const v = buildTestVault();
    const reader = await createKey(v, { permissions: ["read"], prefix: "prod/" });
    expect((await v.request("GET", "/secrets/prod%2F..%2Fx", { token: null })).status).toBe(401);
    expect((await v.request("POST", "/secrets", { token: null, body: { key: "prod/../x", value: "v" } })).status).toBe(401);
    // Outside the prefix: 403, whatever the segments.
    expect((await v.request("GET", "/secrets/..%2Fprod%2Fx", { token: reader.token })).status).toBe(403);
    // Inside the prefix but a permission the key lacks: 403.
    expect((await v.request("DELETE", "/secrets/prod%2F..%2Fx", { token: reader.token })).status).toBe(403);
    expect((await v.request("POST", "/secrets", { token: reader.token, body: { key: "prod/../x", value: "v" } })).status).toBe(403);
    // Inside the prefix with the permission: 400.
    expect((await v.request("GET", "/secrets/prod%2F..%2Fx", { token: reader.token })).status).toBe(400);
  });
});

describe("scoped-key prefixes follow the segment rule", () => {
  it("refuses a prefix with an empty, . or .. segment (400) and creates no key", async () => {
    const v = buildTestVault();
    for (const prefix of ["prod/../", "prod/..", "../", "..", ".", "./", "prod/./", "prod//", "prod//x", "a/../b/"]) {
      const res = await v.asMaster("POST", "/keys", { name: "k", permissions: ["read"], prefix });
      const body = await expectStatus(res, 400);
      expect(String(body.error), prefix).toMatch(/^prefix/);
    }
    expect((await expectStatus(v.asMaster("GET", "/keys"), 200)).keys).toEqual([]);
  });

  it("keeps accepting prefixes that end with / or a partial segment", async () => {
    const v = buildTestVault();
    for (const prefix of ["prod/", "prod", "team-a/app/", "prod/db_", "a.b/", "prod/.e", "x..y/"]) {
      const res = await v.asMaster("POST", "/keys", { name: "k", permissions: ["read"], prefix });
      expect(await expectStatus(res, 201), prefix).toMatchObject({ prefix });
    }
  });

  it("a scoped admin key cannot grant a prefix that climbs out of its own", async () => {
    const v = buildTestVault();
    const admin = await createKey(v, { permissions: ["admin"], prefix: "a/" });
    const res = await v.request("POST", "/keys", { token: admin.token, body: { name: "x", permissions: ["read"], prefix: "a/../b/" } });
    await expectStatus(res, 400);
  });
});

/**
 * GET /openapi.json against the mounted app: every mounted method and path is
 * documented and every documented one is mounted; nothing documented before
 * has been dropped; and real answers of the routes (successes and errors)
 * validate against the document's own response schemas.
 */
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { isSharePagePath } from "../../src/http/pages/routes.js";
import { isConsolePath } from "../../src/http/pages/console/routes.js";
import { isRequestPagePath } from "../../src/http/pages/request-routes.js";
import { describe, expect, it } from "vitest";
import { generateRequestKeys, requestRevealProof, sealAnswer } from "../../packages/client/src/request-envelope.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";
import { approveDevice, CookieFetch, startTestIdp } from "../support/oidc-provider.js";

interface Operation {
  responses: Record<string, { content?: { "application/json"?: { schema?: object }; "text/plain"?: { schema?: object } } }>;
  parameters?: { name: string; in: string }[];
}
type Doc = { paths: Record<string, Record<string, Operation>> };

async function documentOf(v: TestVault): Promise<Doc> {
  const res = await v.request("GET", "/openapi.json", { token: null });
  expect(res.status).toBe(200);
  return (await res.json()) as Doc;
}

/** `METHOD /path/{param}` of every operation of the document. */
function documented(doc: Doc): string[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
}

/** `METHOD /path/{param}` of every handler mounted on the app (405 catch-alls and middleware left out). */
function mounted(v: TestVault): string[] {
  // The share pages (/, /s/..., /assets/...), the request pages (GET /r/...) and the console (/ui) are
  // pages, not API operations: docs/share.md, docs/requests.md and docs/console.md describe them.
  const all = v.app.routes
    .filter((r) => r.method !== "ALL" && !isSharePagePath(r.path) && !(r.method === "GET" && isRequestPagePath(r.path)) && !isConsolePath(r.path))
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}")}`);
  return [...new Set(all)];
}

describe("the OpenAPI document", () => {
  it("documents exactly the mounted routes", async () => {
    const v = buildTestVault();
    const doc = await documentOf(v);
    expect(documented(doc).sort()).toEqual(mounted(v).sort());
  });

  it("still documents every operation it documented before", async () => {
    const doc = await documentOf(buildTestVault());
    const before = JSON.parse(readFileSync(new URL("../fixtures/openapi-operations-before.json", import.meta.url), "utf8")) as string[];
    const now = new Set(documented(doc));
    expect(before.filter((op) => !now.has(op))).toEqual([]);
  });

  it("declares every path parameter of every operation", async () => {
    const doc = await documentOf(buildTestVault());
    for (const [path, ops] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      for (const [method, op] of Object.entries(ops)) {
        const declared = (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
        expect(declared, `${method} ${path}`).toEqual(names);
      }
    }
  });

  it("documents the 400 of every operation that takes a cursor (a bad cursor or limit is refused)", async () => {
    const doc = await documentOf(buildTestVault());
    const paged = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => (op.parameters ?? []).some((p) => p.in === "query" && p.name === "cursor"))
        .map(([method, op]) => ({ name: `${method} ${path}`, op })),
    );
    expect(paged.map((p) => p.name)).toContain("get /orgs/{org_id}/principals");
    for (const { name, op } of paged) expect(Object.keys(op.responses), name).toContain("400");
  });

  it("gives every response of every operation a JSON schema", async () => {
    const doc = await documentOf(buildTestVault());
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, r] of Object.entries(op.responses)) {
          // Every answer is JSON but the Prometheus text of GET /metrics.
          const schema = r.content?.[path === "/metrics" && status === "200" ? "text/plain" : "application/json"]?.schema;
          expect(schema, `${method} ${path} ${status}`).toBeTypeOf("object");
          // A body the document describes field by field, not a bare {type: object}.
          if (path !== "/openapi.json") expect(JSON.stringify(schema), `${method} ${path} ${status}`).not.toBe('{"type":"object"}');
        }
      }
    }
  });

  it("describes real answers of the routes, successes and errors", async () => {
    const v = buildTestVault();
    // Webhooks to a loopback receiver need VAULT_WEBHOOK_ALLOW_PRIVATE: their own vault.
    const hooks = buildTestVault({ webhooks: { allowPrivate: true } });
    await hooks.webhooks.worker.stop();
    let target: TestVault = v;
    const doc = await documentOf(v);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const templates = Object.keys(doc.paths).map((t) => ({
      t,
      re: new RegExp(`^${t.replace(/\{key\}/g, ".+").replace(/\{\w+\}/g, "[^/]+")}$`),
    }));
    const checked = new Set<string>();
    async function check(method: string, path: string, res: Response): Promise<void> {
      const bare = path.split("?")[0] ?? path;
      // The most specific template: the one with the fewest parameters.
      const match = templates
        .filter(({ re }) => re.test(bare))
        .sort((a, b) => (a.t.match(/\{/g)?.length ?? 0) - (b.t.match(/\{/g)?.length ?? 0))[0];
      expect(match, `${method} ${path}`).toBeDefined();
      if (match === undefined) return;
      const op = doc.paths[match.t]?.[method.toLowerCase()];
      const schema = op?.responses[String(res.status)]?.content?.["application/json"]?.schema;
      expect(schema, `${method} ${path} answered ${res.status}, which the document does not list`).toBeDefined();
      if (schema === undefined) return;
      const body = (await res.json()) as unknown;
      const valid = ajv.validate(schema, body);

      expect(valid, `${method} ${path} ${res.status}: ${ajv.errorsText()}`).toBe(true);
      checked.add(`${method} ${match.t} ${res.status}`);
    }
    async function call(method: string, path: string, body?: unknown, token?: string | null): Promise<Response> {
      const res = await target.request(method, path, { body, ...(token === undefined ? {} : { token }) });
      await check(method, path, res.clone());
      return res;
    }

    await call("GET", "/health", undefined, null);
    const metrics = await target.request("GET", "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(doc.paths["/metrics"]?.get?.responses["200"]?.content?.["text/plain"]?.schema).toEqual({ type: "string" });
    checked.add("GET /metrics 200");
    await call("POST", "/secrets", { key: "team/db", value: "s3cret", ttl_seconds: 3600, max_reads: 5 });
    const shared = (await (await call("POST", "/secrets", { value: "public one", ttl_seconds: 60 })).json()) as { receipt: string };
    await call("GET", `/receipts/${shared.receipt}`, undefined, null);
    await call("POST", `/receipts/${shared.receipt}/destroy`, undefined, null);
    await call("POST", `/receipts/${shared.receipt}/destroy`, undefined, null);
    await call("GET", "/receipts/vrc_unknown", undefined, null);
    await call("POST", "/secrets", { key: "bad key!", value: "x" });
    await call("GET", "/secrets");
    await call("GET", "/secrets/team/db");
    await call("GET", "/secrets/team/missing");
    await call("PATCH", "/secrets/team/db", { ttl_seconds: 7200 });
    await call("PUT", "/secrets/team/db", { value: "rotated", max_reads: 9 });
    await call("PUT", "/secrets/team/fresh", { value: "created" });
    await call("POST", "/prune", {});
    const key = await call("POST", "/keys", { name: "reader", permissions: ["read"] });
    const created = (await key.json()) as { id: string; token: string };
    await call("GET", "/keys");
    await call("GET", "/secrets", undefined, created.token);
    await call("POST", "/secrets", { key: "x", value: "y" }, created.token);
    await call("GET", "/audit?limit=5");
    await call("GET", "/audit?since=abc");
    await call("DELETE", `/keys/${created.id}`);
    await call("DELETE", "/secrets/team/db");
    const org = (await (await call("POST", "/orgs", { name: "Acme" })).json()) as { id: string };
    await call("GET", "/orgs");
    await call("GET", `/orgs/${org.id}`);
    await call("GET", `/orgs/${org.id}/roles`);
    await call("POST", `/orgs/${org.id}/roles`, { name: "auditor", permissions: "a" });
    const principal = (await (
      await call("POST", `/orgs/${org.id}/principals`, { name: "ci", role: "writer" })
    ).json()) as { id: string };
    await call("GET", `/orgs/${org.id}/principals`);
    await call("GET", `/orgs/${org.id}/principals/${principal.id}`);
    const pkey = (await (await call("POST", `/orgs/${org.id}/principals/${principal.id}/keys`, { name: "laptop" })).json()) as {
      id: string;
      key: string;
    };
    await call("GET", `/orgs/${org.id}/principals/${principal.id}/keys`);
    await call("GET", "/me", undefined, pkey.key);
    await call("GET", "/me/keys", undefined, pkey.key);
    await call("POST", `/orgs/${org.id}/secrets`, { key: "app/token", value: "abc", ttl_seconds: 600 });
    await call("GET", `/orgs/${org.id}/secrets`);
    await call("PATCH", `/orgs/${org.id}/secrets/app/token`, { max_reads: 3 });
    await call("PUT", `/orgs/${org.id}/secrets/app/token`, { value: "rotated", delete: false });
    await call("PUT", `/orgs/${org.id}/secrets/app/fresh`, { value: "created" });
    await call("DELETE", `/orgs/${org.id}/secrets/app/fresh`);
    await call("GET", `/orgs/${org.id}/secrets/app/token`, undefined, pkey.key);
    await call("GET", `/orgs/${org.id}/audit`);
    for (const base of ["", `/orgs/${org.id}`]) {
      const keys = await generateRequestKeys();
      const { proof, revealCheck } = await requestRevealProof(keys.privateKey);
      const made = (await (await call("POST", `${base}/requests`, { description: "the API key", public_key: keys.publicKey, reveal_check: revealCheck })).json()) as {
        id: string;
      };
      await call("GET", `${base}/requests`);
      await call("GET", `${base}/requests/${made.id}`);
      await call("POST", `/r/${made.id}/reveal`, { proof }, null);
      await call("POST", `/r/${made.id}/answer`, { value: await sealAnswer(keys.publicKey, made.id, "v") }, null);
      await call("POST", `/r/${made.id}/answer`, { value: await sealAnswer(keys.publicKey, made.id, "again") }, null);
      await call("POST", `/r/${made.id}/answer`, { value: "plain text" }, null);
      await call("POST", `/r/${made.id}/reveal`, { proof }, null);
      await call("POST", `/r/${made.id}/reveal`, { proof }, null);
      await call("DELETE", `${base}/requests/${made.id}`);
    }
    await call("GET", "/orgs/org_doesnotexist0000000000000");

    await call("PATCH", `/orgs/${org.id}/roles/auditor`, { permissions: "al" });
    await call("PATCH", `/orgs/${org.id}/principals/${principal.id}`, { metadata: { team: "ci" } });
    await call("PATCH", "/me", { metadata: { laptop: true } }, pkey.key);
    const second = (await (await call("POST", "/me/keys", { name: "second" }, pkey.key)).json()) as { id: string };
    await call("DELETE", `/me/keys/${second.id}`, undefined, pkey.key);
    await call("POST", `/orgs/${org.id}/secrets`, { key: "app/sealable", value: "x", max_reads: 1, delete: false });
    await call("PATCH", `/orgs/${org.id}/secrets/app/sealable`, { max_reads: 2 });
    await call("DELETE", `/orgs/${org.id}/secrets/app/sealable`);
    await call("DELETE", `/orgs/${org.id}/secrets/app/token`);
    await call("POST", `/orgs/${org.id}/prune`);
    await call("DELETE", `/orgs/${org.id}/principals/${principal.id}/keys/${pkey.id}`);
    await call("DELETE", `/orgs/${org.id}/principals/${principal.id}`);
    await call("DELETE", `/orgs/${org.id}/roles/auditor`);
    await call("DELETE", `/orgs/${org.id}`);
    await call("GET", "/openapi.json", undefined, null);

    target = hooks;
    const hookOrg = (await (await call("POST", "/orgs", { name: "Hooks" })).json()) as { id: string };
    for (const base of ["/webhooks", `/orgs/${hookOrg.id}/webhooks`]) {
      const hook = (await (await call("POST", base, { url: "https://127.0.0.1:9/hook", events: ["*"] })).json()) as {
        id: string;
      };
      await call("GET", base);
      await call("GET", `${base}/${hook.id}/deliveries`);
      await call("POST", `${base}/${hook.id}/rotate`);
      await call("POST", `${base}/${hook.id}/test`);
      await call("DELETE", `${base}/${hook.id}`);
    }

    // Single sign-on's device routes: a vault of their own against a real provider (test/support/oidc-provider.ts).
    await call("POST", "/oidc/device", undefined, null);
    const idp = await startTestIdp({ dana: { email: "dana@example.com", name: "Dana", groups: ["devs"] } }, ["http://vault.test/ui/oidc/callback"]);
    try {
      const settings = { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, scopes: "openid email groups", roleClaim: "groups", orgId: "", roleMap: [{ group: "devs", role: "writer" }], keyTtlSeconds: 600 };
      target = buildTestVault({ now: Date.now, oidc: settings });
      settings.orgId = ((await (await target.asMaster("POST", "/orgs", { name: "people" })).json()) as { id: string }).id;
      const started = (await (await call("POST", "/oidc/device", undefined, null)).json()) as { device_id: string; user_code: string; verification_uri_complete: string };
      await call("POST", "/oidc/device/token", { device_id: started.device_id }, null);
      await approveDevice(new CookieFetch(), idp, started.verification_uri_complete, started.user_code, "dana");
      await call("POST", "/oidc/device/token", { device_id: started.device_id }, null);
      await call("POST", "/oidc/device/token", { device_id: started.device_id }, null);
    } finally {
      await idp.close();
    }

    const missing = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops)
        .filter(([, op]) => Object.keys(op.responses).some((st) => st.startsWith("2")))
        .map(([m]) => `${m.toUpperCase()} ${path}`)
        .filter((op) => ![...checked].some((c) => c.startsWith(`${op} 2`))),
    );
    // Every operation with a success answer was reached with one, and it validated.
    expect(missing).toEqual([]);
    // The walk above reached every kind of answer it meant to.
    for (const op of ["POST /secrets 201", "GET /secrets 200", "GET /secrets/{key} 200", "GET /secrets/{key} 404", "GET /audit 200", "GET /audit 400", "POST /orgs 201", "GET /me 200", "GET /orgs/{org_id}/audit 200", "PATCH /secrets/{key} 200", "PUT /secrets/{key} 200", "PUT /secrets/{key} 201", "POST /orgs/{org_id}/principals/{id}/keys 201", "POST /r/{id}/answer 409", "POST /r/{id}/reveal 409", "POST /r/{id}/reveal 404", "POST /oidc/device 404", "POST /oidc/device 201", "POST /oidc/device/token 400", "POST /oidc/device/token 201"]) {
      expect(checked.has(op), `${op}; reached: ${[...checked].join(", ")}`).toBe(true);
    }
  });
});

describe("405 answers", () => {
  it("list the declared methods of each path in one order, GET implying HEAD", async () => {
    const v = buildTestVault();
    const cases: [string, string, string][] = [
      ["PUT", "/secrets", "GET, HEAD, POST"],
      ["POST", "/secrets/team/db", "GET, HEAD, PUT, PATCH, DELETE"],
      ["GET", "/prune", "POST"],
      ["POST", "/audit", "GET, HEAD"],
      ["DELETE", "/keys", "GET, HEAD, POST"],
      ["GET", "/keys/sk_x", "DELETE"],
      ["PUT", "/orgs/org_x/secrets", "GET, HEAD, POST"],
      ["POST", "/orgs/org_x/secrets/a/b", "GET, HEAD, PUT, PATCH, DELETE"],
      ["GET", "/orgs/org_x/prune", "POST"],
      ["POST", "/orgs/org_x/audit", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const res = await v.request(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get("allow"), `${method} ${path}`).toBe(allow);
    }
  });
});

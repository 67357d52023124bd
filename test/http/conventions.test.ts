import { describe, expect, it } from "vitest";
import { buildSqliteTestVault, buildTestVault, itSqlite } from "../support/helpers.js";
import { create, json } from "../support/secret-route-helpers.js";

// The HTTP conventions of every route, GET /openapi.json and GET /health (docs/contract.md); both engines.

describe("HTTP conventions", () => {
  it("answers 401 {error} without a token, with a wrong token, and with a malformed header", async () => {
    const v = buildTestVault();
    await create(v, { key: "k", value: "v" });
    const cases: [string, string, Record<string, string>][] = [
      ["GET", "/secrets/k", {}],
      ["GET", "/secrets/k", { authorization: "Bearer wrong-token-0123456789" }],
      ["GET", "/secrets/k", { authorization: "Basic dXNlcjpwYXNz" }],
      ["GET", "/secrets/k", { authorization: "Bearer" }],
      ["GET", "/secrets", {}],
      ["POST", "/secrets", { authorization: "Bearer nope" }],
      ["PATCH", "/secrets/k", {}],
      ["DELETE", "/secrets/k", { authorization: "Bearer nope" }],
      ["POST", "/prune", {}],
    ];
    for (const [method, path, headers] of cases) {
      const res = await v.request(method, path, { token: null, headers, body: method === "GET" || method === "DELETE" ? undefined : { value: "x" } });
      expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(401);
      const body = await json(res);
      expect(Object.keys(body)).toEqual(["error"]);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
    // nothing was read or created
    expect(await json(await v.asMaster("GET", "/secrets"))).toMatchObject({ secrets: [{ key: "k", read_count: 0 }] });
  });

  it("answers 404 JSON for an unknown path", async () => {
    const v = buildTestVault();
    for (const path of ["/nope", "/secret", "/secrets-x", "/v1/secrets"]) {
      const res = await v.asMaster("GET", path);
      expect(res.status, path).toBe(404);
      expect(Object.keys(await json(res))).toEqual(["error"]);
      expect(res.headers.get("cache-control")).toBe("no-store");
    }
  });

  it("answers 405 with Allow for a wrong method on a known path", async () => {
    const v = buildTestVault();
    const cases: [string, string, string[]][] = [
      // HEAD /secrets is served (GET routes answer HEAD), so Allow names it
      ["PUT", "/secrets", ["GET", "HEAD", "POST"]],
      ["DELETE", "/secrets", ["GET", "HEAD", "POST"]],
      ["PATCH", "/secrets", ["GET", "HEAD", "POST"]],
      ["POST", "/secrets/k", ["GET", "HEAD", "PUT", "PATCH", "DELETE"]],
      ["POST", "/secrets/a/b", ["GET", "HEAD", "PUT", "PATCH", "DELETE"]],
      ["GET", "/prune", ["POST"]],
      ["POST", "/health", ["GET", "HEAD"]],
      ["POST", "/openapi.json", ["GET", "HEAD"]],
    ];
    for (const [method, path, allowed] of cases) {
      for (const m of allowed) {
        // every method Allow names is really served (not 405)
        if (m !== "POST" && m !== "PATCH" && m !== "PUT") expect((await v.asMaster(m, path)).status, `${m} ${path}`).not.toBe(405);
      }
      const res = await v.asMaster(method, path);
      expect(res.status, `${method} ${path}`).toBe(405);
      const allow = (res.headers.get("allow") ?? "").split(",").map((s) => s.trim());
      expect(allow.sort(), `${method} ${path}`).toEqual([...allowed].sort());
      expect(Object.keys(await json(res))).toEqual(["error"]);
    }
  });

  it("sets Cache-Control: no-store on success and error responses alike", async () => {
    const v = buildTestVault({ activeLimit: () => 1 });
    const responses = [
      await create(v, { key: "k", value: "v" }), // 201
      await v.asMaster("GET", "/secrets/k"), // 200
      await v.asMaster("GET", "/secrets"), // 200
      await create(v, { key: "x", value: "v" }), // 402
      await create(v, { value: "" }), // 400
      await v.asMaster("GET", "/secrets/missing"), // 404
      await v.asMaster("POST", "/secrets/k"), // 405
      await v.request("GET", "/secrets/k", { token: null }), // 401
      await v.request("GET", "/health", { token: null }), // 200
      await v.request("GET", "/openapi.json", { token: null }), // 200
    ];
    expect(responses.map((r) => r.status)).toEqual([201, 200, 200, 402, 400, 404, 405, 401, 200, 200]);
    for (const res of responses) expect(res.headers.get("cache-control")).toBe("no-store");
  });

  itSqlite("answers an unexpected failure with exactly {error: internal server error}", async () => {
    const v = buildSqliteTestVault();
    await create(v, { key: "k", value: "v" });
    v.db.exec("DROP INDEX secrets_live_list");
    const res = await v.asMaster("GET", "/secrets");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('{"error":"internal server error"}');
    expect(res.headers.get("cache-control")).toBe("no-store");
  });
});

describe("GET /openapi.json", () => {
  it("serves an OpenAPI 3.1 document without a token, listing the global secret routes", async () => {
    const v = buildTestVault();
    const res = await v.request("GET", "/openapi.json", { token: null });
    expect(res.status).toBe(200);
    const doc = (await json(res)) as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toBe("ephemeral-vault");
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(doc.paths["/secrets"] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(doc.paths["/secrets/{key}"] ?? {}).sort()).toEqual(["delete", "get", "patch", "put"]);
    expect(Object.keys(doc.paths["/prune"] ?? {})).toEqual(["post"]);
    expect(Object.keys(doc.paths["/health"] ?? {})).toEqual(["get"]);
    expect(doc.paths["/secrets"]?.post?.requestBody).toBeDefined();
    expect(Object.keys(doc.paths["/secrets"]?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(["201", "400", "401", "402", "409", "413"]),
    );
    const bodySchema = JSON.stringify(doc.paths["/secrets"]?.post?.requestBody);
    for (const field of ["key", "value", "ttl_seconds", "max_reads"]) expect(bodySchema).toContain(field);
  });
});

describe("GET /health", () => {
  it("answers 200 {status: ok} without a token", async () => {
    const v = buildTestVault();
    const res = await v.request("GET", "/health", { token: null });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ status: "ok" });
  });

  itSqlite("answers 503 {status: unavailable} when the database does not answer", async () => {
    const v = buildSqliteTestVault();
    v.db.close();
    const res = await v.request("GET", "/health", { token: null });
    expect(res.status).toBe(503);
    expect(await json(res)).toEqual({ status: "unavailable" });
  });
});

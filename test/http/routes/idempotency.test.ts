import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log/log.js";
import { startSweeper } from "../../../src/runtime/sweeper.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";

// Idempotency-Key on the engine under test (docs/api.md, "Retries"): a retry gets the first
// answer again, marked as a replay, and changes nothing; another request with the key is 422;
// another token's same key is a new request; the window ends.

function withKey(v: TestVault, method: string, path: string, key: string, body?: unknown, token?: string | null) {
  return v.request(method, path, { body, headers: { "idempotency-key": key }, ...(token === undefined ? {} : { token }) });
}

async function answerOf(res: Response) {
  return { status: res.status, replayed: res.headers.get("idempotent-replayed"), body: (await res.json()) as Record<string, unknown> };
}

async function auditActions(v: TestVault, action: string): Promise<number> {
  const res = await v.asMaster("GET", `/audit?action=${action}`);
  return ((await res.json()) as { entries: unknown[] }).entries.length;
}

describe("Idempotency-Key", () => {
  it("a retried create gets its first answer (201, replayed) and creates nothing more", async () => {
    const v = buildTestVault();
    const first = await answerOf(await withKey(v, "POST", "/secrets", "create-1", { key: "db/password", value: "s3cret" }));
    expect(first).toEqual({ status: 201, replayed: null, body: { key: "db/password" } });
    const again = await answerOf(await withKey(v, "POST", "/secrets", "create-1", { key: "db/password", value: "s3cret" }));
    expect(again).toEqual({ status: 201, replayed: "true", body: { key: "db/password" } });
    // Without the key the same create is refused: it exists once.
    expect((await v.asMaster("POST", "/secrets", { key: "db/password", value: "s3cret" })).status).toBe(409);
    const pub = await answerOf(await withKey(v, "POST", "/secrets", "create-2", { value: "a dead drop" }));
    const pubAgain = await answerOf(await withKey(v, "POST", "/secrets", "create-2", { value: "a dead drop" }));
    expect(pubAgain.body).toEqual(pub.body);
    expect(await v.query("SELECT key FROM secrets WHERE is_public = 1")).toHaveLength(1);
    expect(await auditActions(v, "secret.created")).toBe(2);
  });

  it("a retried read of a one-read secret gets the value again, with no second read", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "once", value: "the only copy 🔑", max_reads: 1 });
    const first = await answerOf(await withKey(v, "GET", "/secrets/once", "read-1"));
    expect(first.status).toBe(200);
    expect(first.body.value).toBe("the only copy 🔑");
    const again = await answerOf(await withKey(v, "GET", "/secrets/once", "read-1"));
    expect(again).toEqual({ status: 200, replayed: "true", body: first.body });
    expect((await v.asMaster("GET", "/secrets/once")).status).toBe(404);
    expect(await auditActions(v, "secret.read")).toBe(1);
    expect(await auditActions(v, "secret.burned")).toBe(1);
    // The kept answer holds the value encrypted, never in clear.
    const kept = JSON.stringify(await v.query("SELECT * FROM idempotency"));
    expect(kept).not.toContain("the only copy");
  });

  it("another token's same key is a new request; the same key on another request is 422 and changes nothing", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "once", value: "v", max_reads: 1 });
    await v.asMaster("POST", "/secrets", { key: "other", value: "w", max_reads: 1 });
    const reader = await createKey(v, { permissions: ["read", "write", "delete"] });
    expect((await withKey(v, "GET", "/secrets/once", "k")).status).toBe(200);
    // Another token: not a replay, a read of a burned secret.
    const theirs = await withKey(v, "GET", "/secrets/once", "k", undefined, reader.token);
    expect(theirs.status).toBe(404);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
    for (const [method, path, body] of [
      ["GET", "/secrets/other", undefined],
      ["DELETE", "/secrets/once", undefined],
      ["POST", "/secrets", { key: "x", value: "y" }],
    ] as const) {
      const res = await withKey(v, method, path, "k", body);
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(((await res.json()) as { error: string }).error).toMatch(/Idempotency-Key/);
    }
    // Nothing was done by the refused ones: `other` is still there, `x` was not made.
    expect((await v.asMaster("HEAD", "/secrets/other")).status).toBe(200);
    expect((await v.asMaster("HEAD", "/secrets/x")).status).toBe(404);
    // The same create with a body that differs only in spacing is the same request (the parsed body is compared).
    expect((await withKey(v, "POST", "/secrets", "k2", { key: "z", value: "1" })).status).toBe(201);
    const spaced = await v.request("POST", "/secrets", { raw: '{ "key" : "z",  "value": "1" }', contentType: "application/json", headers: { "idempotency-key": "k2" } });
    expect(spaced.status).toBe(201);
    expect(spaced.headers.get("idempotent-replayed")).toBe("true");
  });

  it("keeps the answer for the window only: then the key is new, and the sweeper deletes what was kept", async () => {
    const v = buildTestVault({ idempotencyWindowSeconds: 60 });
    await v.asMaster("POST", "/secrets", { key: "once", value: "v", max_reads: 1 });
    expect((await withKey(v, "GET", "/secrets/once", "w")).status).toBe(200);
    v.clock.advance(59_000);
    expect((await withKey(v, "GET", "/secrets/once", "w")).status).toBe(200);
    v.clock.advance(1_000);
    expect((await withKey(v, "GET", "/secrets/once", "w")).status).toBe(404);
    const sweeper = startSweeper({ secrets: v.secrets, idempotency: v.idempotency, tx: v.tx, log: createLogger("silent"), intervalMs: 0 });
    await sweeper.sweepNow();
    await sweeper.stop();
    expect(await v.query("SELECT id_hash FROM idempotency")).toEqual([]);
  });

  it("replays PUT, PATCH and DELETE; refuses a malformed key with 400", async () => {
    const v = buildTestVault();
    expect((await withKey(v, "PUT", "/secrets/p", "put-1", { value: "one" })).status).toBe(201);
    const put = await withKey(v, "PUT", "/secrets/p", "put-1", { value: "one" });
    expect([put.status, put.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect((await withKey(v, "PATCH", "/secrets/p", "patch-1", { max_reads: 5 })).status).toBe(200);
    expect((await withKey(v, "PATCH", "/secrets/p", "patch-1", { max_reads: 5 })).headers.get("idempotent-replayed")).toBe("true");
    expect((await withKey(v, "DELETE", "/secrets/p", "del-1")).status).toBe(200);
    const del = await withKey(v, "DELETE", "/secrets/p", "del-1");
    expect([del.status, del.headers.get("idempotent-replayed"), await del.json()]).toEqual([200, "true", { deleted: true }]);
    for (const bad of ["", "x".repeat(256), "caf\u00e9", "tab\there"]) {
      const res = await v.request("GET", "/secrets/p", { headers: { "idempotency-key": bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await withKey(v, "GET", "/secrets/p", "x".repeat(255))).status).toBe(404);
  });

  it("replays a share page reveal: the value again, one read counted", async () => {
    const v = buildTestVault();
    const made = (await (await v.asMaster("POST", "/secrets", { value: "dead drop", max_reads: 1 })).json()) as { id: string };
    const first = await withKey(v, "POST", `/s/${made.id}/reveal`, "reveal-1", undefined, null);
    expect(first.status).toBe(200);
    const again = await withKey(v, "POST", `/s/${made.id}/reveal`, "reveal-1", undefined, null);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(((await again.json()) as { value: string }).value).toBe("dead drop");
    expect((await v.request("POST", `/s/${made.id}/reveal`, { token: null })).status).toBe(404);
    expect(await auditActions(v, "secret.read")).toBe(1);
  });

  it("answers identical requests sent at once with one change", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "once", value: "v", max_reads: 1 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => withKey(v, "GET", "/secrets/once", "race").then(answerOf)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    expect(await auditActions(v, "secret.read")).toBe(1);
  });

  it("is in the OpenAPI document of the routes that take it", async () => {
    const v = buildTestVault();
    const doc = (await (await v.request("GET", "/openapi.json", { token: null })).json()) as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; responses: Record<string, unknown> }>>;
    };
    for (const [path, method] of [["/secrets", "post"], ["/secrets/{key}", "get"], ["/secrets/{key}", "put"], ["/secrets/{key}", "patch"], ["/secrets/{key}", "delete"], ["/orgs/{org_id}/secrets", "post"]] as const) {
      const op = doc.paths[path]?.[method];
      expect(op?.parameters.some((p) => p.name === "Idempotency-Key" && p.in === "header"), `${method} ${path}`).toBe(true);
      expect(op?.responses["422"], `${method} ${path}`).toBeDefined();
    }
    expect(doc.paths["/secrets"]?.get?.parameters.some((p) => p.name === "Idempotency-Key")).toBe(false);
  });
});

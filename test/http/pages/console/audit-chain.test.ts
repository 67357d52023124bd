import { describe, expect, it } from "vitest";
import { buildSqliteTestVault, buildTestVault, createKey, itSqlite, MASTER_KEY } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// The audit page's chain banner (docs/console.md, "Audit"): the master key's alone, checked
// incrementally from the last verified row on both engines (on SQLite the new rows' spans
// included; PostgreSQL's own cases: test/store/pg/audit/verify.pg.test.ts).

const ORIGIN = "http://vault.test";

async function signedIn(v: TestVault, token: string): Promise<(path: string) => Promise<string>> {
  const res = await v.app.request("/ui/login", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
    body: new URLSearchParams({ token }).toString(),
  });
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  return async (path) => (await v.app.request(path, { headers: { cookie } })).text();
}

const banner = (html: string) => /<p class="notice [a-z]+" id="chain">([^<]*)<\/p>/.exec(html)?.[1];

describe("the audit page's chain banner", () => {
  it("is shown to the master key, and not to an admin key (prefix-scoped or not): the global log's size is the operator's", async () => {
    const v = buildTestVault();
    for (let i = 0; i < 3; i++) expect((await v.asMaster("POST", "/secrets", { key: `team/k${i}`, value: "v" })).status).toBe(201);
    const master = await signedIn(v, MASTER_KEY);
    expect(banner(await master("/ui/audit"))).toMatch(/intact through entry \d+/);
    for (const prefix of [null, "team/"]) {
      const admin = await createKey(v, { permissions: ["admin"], prefix });
      const html = await (await signedIn(v, admin.token))("/ui/audit");
      expect(html).toContain("<table");
      expect(banner(html)).toBeUndefined();
      expect(html).not.toMatch(/hash chain/i);
    }
  });

  it("counts the rows written since the last view", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    const master = await signedIn(v, MASTER_KEY);
    const first = Number(/entry (\d+)/.exec(banner(await master("/ui/audit")) ?? "")?.[1]);
    for (let i = 0; i < 5; i++) await v.asMaster("POST", "/secrets", { key: `b${i}`, value: "v" });
    const second = Number(/entry (\d+)/.exec(banner(await master("/ui/audit")) ?? "")?.[1]);
    expect(second).toBeGreaterThanOrEqual(first + 5);
  });

  it("reads, at the next check, only the rows written since the last one (the engine's check, both engines)", async () => {
    const v = buildTestVault();
    for (let i = 0; i < 3; i++) await v.asMaster("POST", "/secrets", { key: `a${i}`, value: "v" });
    const keys = v.cipher.auditChainKeys();
    const first = await v.engine.verifyAudit(keys);
    expect(first).toMatchObject({ ok: true, walked: first.rows });
    expect(await v.engine.verifyAudit(keys)).toEqual({ ok: true, rows: first.rows, walked: 0 });
    for (let i = 0; i < 4; i++) await v.asMaster("POST", "/secrets", { key: `b${i}`, value: "v" });
    const third = await v.engine.verifyAudit(keys);
    expect(third).toMatchObject({ ok: true, walked: third.rows - first.rows });
    expect(third.rows).toBeGreaterThanOrEqual(first.rows + 4);
  });

  itSqlite("shows a row written after the last view and then removed from its spans", async () => {
    const v = buildSqliteTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    const master = await signedIn(v, MASTER_KEY);
    expect(banner(await master("/ui/audit"))).toMatch(/intact/);
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" });
    v.db.exec("DROP TRIGGER audit_span_no_delete");
    v.db.prepare("DELETE FROM audit_span WHERE kind = 'a' AND value = 'secret.created' AND lo = (SELECT max(lo) FROM audit_span WHERE kind = 'a' AND value = 'secret.created')").run();
    expect(banner(await master("/ui/audit"))).toMatch(/breaks at entry \d+: the row is in none of its action/);
  });
});

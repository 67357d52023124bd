import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupTemp, runCommand, tempDir } from "../../support/e2e-helpers.js";
import { buildTestVault } from "../../support/helpers.js";
import { createOrg, expectStatus } from "../../support/org-helpers.js";

afterAll(cleanupTemp);

describe("strings that would not read back as written", () => {
  it("refuses a value with a lone surrogate (400) and stores nothing", async () => {
    const v = buildTestVault();
    for (const raw of ['{"key":"k","value":"a\\ud800b"}', '{"key":"k","value":"\\udc00"}', '{"key":"k","value":"v","metadata":{"\\ud83d":1}}']) {
      const res = await v.request("POST", "/secrets", { raw, contentType: "application/json" });
      expect(res.status, raw).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/lone surrogate/);
    }
    expect((await v.asMaster("GET", "/secrets/k")).status).toBe(404);
    // A proper pair (an emoji, escaped or not) is fine and reads back the same.
    await expectStatus(v.request("POST", "/secrets", { raw: '{"key":"k","value":"a\\ud83d\\ude00b 😀"}', contentType: "application/json" }), 201);
    expect((await expectStatus(v.asMaster("GET", "/secrets/k"), 200)).value).toBe("a😀b 😀");
  });

  it.each([
    ["a newline", "ann\nroot"],
    ["an escape sequence", "ann\u001b[31m"],
    ["DEL", "ann\u007f"],
    ["a right-to-left override", "ann\u202egnp.exe"],
    ["a bidi isolate", "\u2066ann\u2069"],
    ["a zero-width space", "an\u200bn"],
    ["a zero-width joiner", "an\u200dn"],
    ["a byte order mark", "an\ufeffn"],
    ["a line separator", "an\u2028n"],
  ])("refuses a name with %s (400) for orgs, principals, principal keys and scoped keys", async (_what, name) => {
    const v = buildTestVault();
    expect((await expectStatus(v.asMaster("POST", "/orgs", { name }), 400)).error).toMatch(/control, bidirectional or zero-width/);
    const orgId = await createOrg(v);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name, role: "reader" }), 400);
    const p = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ok", role: "reader" }), 201);
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals/${p.id as string}/keys`, { name }), 400);
    await expectStatus(v.asMaster("POST", "/keys", { name, permissions: ["read"] }), 400);
  });

  it("keeps accepting names in any script, with accents, spaces and emoji", async () => {
    const v = buildTestVault();
    for (const name of ["Ann Smith", "Zoë", "東京チーム", "فريق", "team 🚀"]) {
      expect((await expectStatus(v.asMaster("POST", "/orgs", { name }), 201)).name).toBe(name);
    }
  });
});

describe("key files readable by others", () => {
  it.each(["master.key", "encryption.key", "webhook.secret"])("%s with mode 0644: the start is refused with exit 2, naming the file and chmod 600", (file) => {
    const dir = tempDir();
    const path = join(dir, file);
    writeFileSync(path, file === "encryption.key" ? "ab".repeat(32) + "\n" : "a-long-enough-secret-0123456789\n", { mode: 0o600 });
    chmodSync(path, 0o644);
    const refused = runCommand(["--port", "0"], { VAULT_DATA_DIR: dir, VAULT_MASTER_KEY: undefined, VAULT_ENCRYPTION_KEY: undefined, VAULT_WEBHOOK_SECRET: undefined });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(path);
    expect(refused.stderr).toContain(`chmod 600 ${path}`);
    expect(refused.stderr).not.toContain("a-long-enough-secret");
  });
});

import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { renderSchema, SCHEMA_PATH } from "../scripts/client-schema.mjs";
import { cleanupTemp, ROOT, tempDir } from "./e2e-helpers.js";
import { buildTestVault } from "./helpers.js";

/**
 * The client's generated types follow the server's OpenAPI document, and the
 * built client entry stands alone (no server code, no dependencies).
 */

afterAll(cleanupTemp);

/** The relative modules dist/<file> imports, transitively, and every bare specifier met. */
function importGraph(file: string, seen = new Set<string>(), bare = new Set<string>()): { files: Set<string>; bare: Set<string> } {
  if (seen.has(file)) return { files: seen, bare };
  seen.add(file);
  const source = readFileSync(join(ROOT, "dist", file), "utf8");
  for (const m of source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)) {
    const spec = m[1] ?? "";
    if (spec.startsWith("./")) importGraph(spec.slice(2), seen, bare);
    else bare.add(spec);
  }
  return { files: seen, bare };
}

describe("client types", () => {
  it("src/client/schema.d.ts is what openapi-typescript makes of today's /openapi.json (npm run gen:client)", async () => {
    const vault = buildTestVault();
    const res = await vault.request("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const expected = await renderSchema(await res.json());
    const committed = readFileSync(join(ROOT, SCHEMA_PATH), "utf8");
    expect(committed === expected, "schema.d.ts is stale: run `npm run gen:client` and commit it").toBe(true);
  });
});

describe("the built client entry (dist/client.js)", () => {
  it("imports nothing outside its own chunks: no hono, no better-sqlite3, no node: builtins", () => {
    const { files, bare } = importGraph("client.js");
    expect(files.size).toBeGreaterThanOrEqual(1);
    expect([...bare]).toEqual([]);
  });

  it("loads and works from a directory without node_modules", () => {
    const dir = tempDir("ev-client-");
    for (const file of importGraph("client.js").files) copyFileSync(join(ROOT, "dist", file), join(dir, file));
    const script = [
      `import { VaultClient, VaultApiError } from ${JSON.stringify(join(dir, "client.js"))};`,
      `const c = new VaultClient({ addr: "http://vault.invalid/", token: "t", fetch: async () => new Response('{"error":"nope"}', { status: 418, headers: { "content-type": "application/json" } }) });`,
      `try { await c.get("a/b c"); } catch (e) { console.log(JSON.stringify({ api: e instanceof VaultApiError, status: e.status, error: e.error, addr: c.addr })); }`,
    ].join("\n");
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ api: true, status: 418, error: "nope", addr: "http://vault.invalid" });
  });
});

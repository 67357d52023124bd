import { execFileSync } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { renderSchema, SCHEMA_PATH } from "../../scripts/client-schema.mjs";
import { cleanupTemp, ROOT, tempDir } from "../support/e2e-helpers.js";
import { buildTestVault } from "../support/helpers.js";

/**
 * The client's generated types follow the server's OpenAPI document, and the
 * client package's built entries stand alone (no server code, no dependencies).
 */

/** The client package's build (packages/client/dist, built by the test setup). */
const CLIENT_DIST = join(ROOT, "packages", "client", "dist");

afterAll(cleanupTemp);

/** The relative modules packages/client/dist/<file> imports, transitively, and every bare specifier met. */
function importGraph(file: string, seen = new Set<string>(), bare = new Set<string>()): { files: Set<string>; bare: Set<string> } {
  if (seen.has(file)) return { files: seen, bare };
  seen.add(file);
  const source = readFileSync(join(CLIENT_DIST, file), "utf8");
  for (const m of source.matchAll(/(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g)) {
    const spec = m[1] ?? "";
    if (spec.startsWith("./")) importGraph(spec.slice(2), seen, bare);
    else bare.add(spec);
  }
  return { files: seen, bare };
}

describe("client types", () => {
  it("packages/client/src/schema.d.ts is what openapi-typescript makes of today's /openapi.json (npm run gen:client)", async () => {
    const vault = buildTestVault();
    const res = await vault.request("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const expected = await renderSchema(await res.json());
    const committed = readFileSync(join(ROOT, SCHEMA_PATH), "utf8");
    expect(committed === expected, "schema.d.ts is stale: run `npm run gen:client` and commit it").toBe(true);
  });
});

describe("the client package's build (packages/client/dist)", () => {
  it("imports nothing outside its own files: no hono, no better-sqlite3, no node: builtins (ESM and CommonJS)", () => {
    for (const entry of ["index.js", "index.cjs"]) {
      const { files, bare } = importGraph(entry);
      expect(files.size, entry).toBeGreaterThanOrEqual(1);
      expect([...bare], entry).toEqual([]);
    }
  });

  it("loads and works from a directory without node_modules, by import and by require", () => {
    const dir = tempDir("ev-client-");
    for (const entry of ["index.js", "index.cjs"]) {
      for (const file of importGraph(entry).files) copyFileSync(join(CLIENT_DIST, file), join(dir, file));
    }
    const call = [
      `const c = new VaultClient({ addr: "http://vault.invalid/", token: "t", fetch: async () => new Response('{"error":"nope"}', { status: 418, headers: { "content-type": "application/json" } }) });`,
      `c.get("a/b c").catch((e) => console.log(JSON.stringify({ api: e instanceof VaultApiError, status: e.status, error: e.error, addr: c.addr })));`,
    ];
    const esm = [`import { VaultClient, VaultApiError } from ${JSON.stringify(join(dir, "index.js"))};`, ...call].join("\n");
    const cjs = [`const { VaultClient, VaultApiError } = require(${JSON.stringify(join(dir, "index.cjs"))});`, ...call].join("\n");
    const expected = { api: true, status: 418, error: "nope", addr: "http://vault.invalid" };
    expect(JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", esm], { cwd: dir, encoding: "utf8" }))).toEqual(expected);
    expect(JSON.parse(execFileSync(process.execPath, ["--input-type=commonjs", "-e", cjs], { cwd: dir, encoding: "utf8" }))).toEqual(expected);
  });
});

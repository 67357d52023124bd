import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pack, project, run, typeCheck } from "../support/client-pack-helpers.js";
import { cleanupTemp, ROOT, tempDir } from "../support/e2e-helpers.js";

/**
 * The server package as an embedder gets it (docs/embedding.md, docs/deploy.md
 * "The npm package"): packed with `npm pack`, installed from the tarball with
 * npm into a project of its own (its dependencies from the npm cache), then
 * `require("ephemeral-vault")` calling startVault() in a child process (the
 * Node.js that runs this file: require(esm), 20.19+, 22.12+, 24), and a strict
 * consumer type-checked with `skipLibCheck: false`, every declaration it loads
 * checked. SQLite by construction: startVault's default engine, ":memory:".
 */

interface Manifest {
  scripts?: Record<string, string>;
  engines?: Record<string, string>;
  exports: Record<string, unknown>;
}

let consumer: string;
let files: string[];
let manifest: Manifest;

/** A CommonJS embedder: startVault through require(), a put and a get, then close. */
const CJS = `const { startVault, version, ConfigError } = require("ephemeral-vault");
(async () => {
  const vault = await startVault();
  const health = await vault.fetch("/health");
  await vault.client.put("cjs/db_password", "from require");
  const read = await vault.client.get("cjs/db_password");
  const refused = await startVault({ port: -1 }).catch((err) => err);
  await vault.close();
  console.log(JSON.stringify({ health: health.status, value: read.value, version, configError: refused instanceof ConfigError, resolved: require.resolve("ephemeral-vault") }));
})();
`;

/** The same through createRequire in an ES module (what a bundler-less ESM tool that requires does). */
const CREATE_REQUIRE = `import { createRequire } from "node:module";
const { startVault } = createRequire(import.meta.url)("ephemeral-vault");
const vault = await startVault({ settings: { shareAnonymous: true } });
const health = await vault.fetch("/health");
await vault.close();
console.log(JSON.stringify({ health: health.status }));
`;

/** A typed embedder, ESM (.mts) and CommonJS (.cts) alike: compiles only if the declarations are real. */
const TYPED = `import { ConfigError, startVault, version } from "ephemeral-vault";
import type { EmbeddedVault, StartVaultOptions, VaultSettings } from "ephemeral-vault";
const settings: VaultSettings = { sweepIntervalMs: 250, maxValueBytes: 1024, logLevel: "info" };
const options: StartVaultOptions = { port: 0, masterKey: "0123456789abcdef", settings };
export const started: Promise<EmbeddedVault> = startVault(options);
export const value: Promise<string> = started.then((v) => v.client.get("k")).then((read) => read.value);
export const health: Promise<number> = started.then((v) => v.fetch("/health")).then((res) => res.status);
export const isConfigError = (err: unknown): boolean => err instanceof ConfigError;
export const v: string = version;
`;

beforeAll(() => {
  const out = tempDir("ev-pkg-pack-");
  const packed = pack(out);
  files = packed.files;
  consumer = project(join(tempDir("ev-pkg-consumer-"), "app"), {
    "embed.cjs": CJS,
    "create-require.mjs": CREATE_REQUIRE,
    "typed.mts": TYPED,
    "typed.cts": TYPED,
    "misuse.mts": `import { startVault } from "ephemeral-vault";\nexport const started = startVault({ port: "eighty" });\n`,
  });
  const typesNode = (JSON.parse(readFileSync(join(ROOT, "node_modules", "@types", "node", "package.json"), "utf8")) as { version: string }).version;
  // As a user would, from the tarball; the dependencies from the npm cache when it has them.
  // --ignore-scripts: better-sqlite3's build is not repeated here; the addon this Node.js
  // already has is copied in (the one its install script would have compiled).
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", packed.tarball, `@types/node@${typesNode}`], consumer);
  const release = join(consumer, "node_modules", "better-sqlite3", "build", "Release");
  mkdirSync(release, { recursive: true });
  copyFileSync(join(ROOT, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node"), join(release, "better_sqlite3.node"));
  manifest = JSON.parse(readFileSync(join(consumer, "node_modules", "ephemeral-vault", "package.json"), "utf8")) as Manifest;
}, 300_000);
afterAll(() => {
  cleanupTemp();
});

describe("the packed server package", () => {
  it("runs no script of its own at install (no prepare: npm 11 warns about it on every install)", () => {
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts?.[hook], hook).toBeUndefined();
    expect(manifest.engines?.node).toBe("^20.19.0 || ^22.12.0 || >=24.0.0");
  });

  it("carries no source maps, no internal entry, and only screenshots that its docs show", () => {
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => f.startsWith("dist/internal"))).toEqual([]);
    expect(files).toContain("dist/index.d.ts");
    const docs = files.filter((f) => f.endsWith(".md")).map((f) => readFileSync(join(consumer, "node_modules", "ephemeral-vault", f), "utf8"));
    const images = files.filter((f) => /\.(png|jpe?g|gif|webp|svg)$/.test(f));
    for (const image of images) {
      const name = image.split("/").pop() ?? image;
      expect(docs.some((text) => text.includes(`images/${name}`)), image).toBe(true);
    }
  });

  it("offers require() in its exports map, and startVault works through it", () => {
    expect(manifest.exports["."]).toMatchObject({ types: "./dist/index.d.ts", import: "./dist/index.js", require: "./dist/index.js" });
    const out = JSON.parse(run(process.execPath, ["embed.cjs"], consumer)) as Record<string, unknown>;
    expect(out).toMatchObject({ health: 200, value: "from require", configError: true });
    expect(out.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(out.resolved).toBe(join(consumer, "node_modules", "ephemeral-vault", "dist", "index.js"));
    expect(JSON.parse(run(process.execPath, ["create-require.mjs"], consumer))).toEqual({ health: 200 });
  }, 60_000);

  it("type-checks a strict consumer with skipLibCheck off, loading none of the server's dependencies' types but pino's", () => {
    const res = typeCheck(consumer, "tsconfig.json", ["typed.mts", "typed.cts"], { types: ["node"] });
    expect(res.status, res.output).toBe(0);
    expect(res.output).toContain("node_modules/ephemeral-vault/dist/index.d.ts");
    for (const dep of ["hono", "@hono", "prom-client", "pg", "@types/pg", "better-sqlite3", "@types/better-sqlite3", "@modelcontextprotocol", "zod", "valibot"]) {
      expect(res.output, dep).not.toContain(`node_modules/${dep}/`);
    }
    const bad = typeCheck(consumer, "tsconfig.misuse.json", ["misuse.mts"], { types: ["node"] });
    expect(bad.output).toMatch(/misuse\.mts.*error TS2322/);
  }, 120_000);
});

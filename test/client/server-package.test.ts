import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cjsScript, esmScript, nodeJson, pack, project, typeCheck, typedConsumer, unpack } from "../support/client-pack-helpers.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * "ephemeral-vault/client" from the packed server package (docs/client.md
 * "Install"): the server's tarball, which carries the client package
 * (bundled), laid out in a project's node_modules as npm installs it; then
 * the `./client` export used with import and with require against a vault
 * started here, and type-checked as an ESM and a CommonJS consumer.
 */

const NAME = "ephemeral-vault/client";

/** Whether "ephemeral-vault/client" is the module the server package's own code gets for @ephemeral-vault/client (its bundled copy). */
const SAME_MODULE = `import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import * as viaExport from "ephemeral-vault/client";
const serverRequire = createRequire(import.meta.resolve("ephemeral-vault/package.json"));
const own = serverRequire.resolve("@ephemeral-vault/client");
const ownEsm = await import(pathToFileURL(own.replace(/\\.cjs$/, ".js")).href);
const appRequire = createRequire(import.meta.url);
console.log(JSON.stringify({
  esm: viaExport.VaultClient === ownEsm.VaultClient && viaExport.describeFailure === ownEsm.describeFailure,
  cjs: appRequire("ephemeral-vault/client").VaultClient === serverRequire("@ephemeral-vault/client").VaultClient,
  names: Object.keys(viaExport).sort().join() === Object.keys(ownEsm).sort().join(),
}));
`;
let vault: VaultProcess;
let consumer: string;
let serverFiles: string[];
let clientFiles: string[];
let clientVersion: string;

beforeAll(async () => {
  vault = await startVault(tempDir());
  const out = tempDir("ev-server-pack-");
  const server = pack(out);
  const client = pack(out, ["-w", "packages/client"]);
  serverFiles = server.files;
  clientFiles = client.files;
  consumer = project(join(tempDir("ev-server-consumer-"), "app"), {
    "esm.mjs": esmScript(NAME, "srv/esm"),
    "cjs.cjs": cjsScript(NAME, "srv/cjs"),
    "same.mjs": SAME_MODULE,
    "typed.mts": typedConsumer(NAME),
    "typed.cts": typedConsumer(NAME),
    "root.mts": `import { startVault } from "ephemeral-vault";\nimport type { EmbeddedVault, StartVaultOptions } from "ephemeral-vault";\nexport const options: StartVaultOptions = { port: 0, masterKey: "0123456789abcdef" };\nexport const started: Promise<EmbeddedVault> = startVault(options);\n`,
    "root-misuse.mts": `import { startVault } from "ephemeral-vault";\nexport const started = startVault({ port: "eighty" });\n`,
  });
  unpack(server.tarball, join(consumer, "node_modules", "ephemeral-vault"));
  clientVersion = (JSON.parse(readFileSync(join(ROOT, "packages", "client", "package.json"), "utf8")) as { version: string }).version;
}, 180_000);
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

describe("the packed server package's ephemeral-vault/client", () => {
  it("depends on the client package and carries it as packed (bundled); client/ only re-exports it", () => {
    const manifest = JSON.parse(readFileSync(join(consumer, "node_modules", "ephemeral-vault", "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      bundleDependencies: string[];
    };
    expect(manifest.dependencies["@ephemeral-vault/client"]).toBe(clientVersion);
    expect(manifest.bundleDependencies).toEqual(["@ephemeral-vault/client"]);
    for (const file of ["client/index.js", "client/index.cjs", "client/index.d.ts", "client/index.d.cts"]) expect(serverFiles, file).toContain(file);
    // The bundled copy is the client's own tarball, file for file: no sources, no workspace link.
    const bundled = serverFiles.filter((f) => f.startsWith("node_modules/")).map((f) => f.replace("node_modules/@ephemeral-vault/client/", ""));
    expect(bundled.sort()).toEqual([...clientFiles].sort());
    expect(serverFiles.filter((f) => f.startsWith("packages/") || f.startsWith("src/"))).toEqual([]);
    // The server's own code imports the client; only the browser pages (dist/ui) carry the envelope code.
    const serverJs = serverFiles.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    expect(serverJs.length).toBeGreaterThan(0);
    const copies = serverJs.filter((f) => /class VaultClient\b/.test(readFileSync(join(consumer, "node_modules", "ephemeral-vault", f), "utf8")));
    expect(copies).toEqual([]);
  });

  it("works with import (ESM) against a real vault, the very module of the bundled client", () => {
    const out = nodeJson(consumer, "esm.mjs", { url: vault.url, token: E2E_MASTER_KEY });
    expect(out.value).toBe("value of srv/esm");
    expect(out).toMatchObject({ api: true, status: 404, failure: { code: 1 } });
    expect(out.resolved).toBe(`file://${join(consumer, "node_modules", "ephemeral-vault", "client", "index.js")}`);
    expect(nodeJson(consumer, "same.mjs", { url: vault.url, token: E2E_MASTER_KEY })).toEqual({ esm: true, cjs: true, names: true });
  });

  it("works with require (CommonJS) against a real vault", () => {
    const out = nodeJson(consumer, "cjs.cjs", { url: vault.url, token: E2E_MASTER_KEY });
    expect(out.value).toBe("value of srv/cjs");
    expect(out).toMatchObject({ api: true, status: 404, failure: { code: 1 } });
    expect(out.resolved).toBe(join(consumer, "node_modules", "ephemeral-vault", "client", "index.cjs"));
  });

  it("type-checks an ESM (.mts) and a CommonJS (.cts) consumer of ephemeral-vault/client", () => {
    const res = typeCheck(consumer, "tsconfig.json", ["typed.mts", "typed.cts"]);
    expect(res.status, res.output).toBe(0);
    expect(res.output).toContain("node_modules/ephemeral-vault/client/index.d.ts");
    expect(res.output).toContain("node_modules/ephemeral-vault/client/index.d.cts");
    expect(res.output).toContain("node_modules/ephemeral-vault/node_modules/@ephemeral-vault/client/dist/index.d.cts");
  }, 120_000);

  it("ships types for the root import too (startVault and its options); a misuse does not compile", () => {
    // The server's own dependencies are not installed here: their declarations are not checked.
    const root = typeCheck(consumer, "tsconfig.root.json", ["root.mts"], { skipLibCheck: true });
    expect(root.status, root.output).toBe(0);
    expect(root.output).toContain("node_modules/ephemeral-vault/dist/index.d.ts");
    const bad = typeCheck(consumer, "tsconfig.root-misuse.json", ["root-misuse.mts"], { skipLibCheck: true });
    expect(bad.output).toMatch(/root-misuse\.mts.*error TS2322/);
  }, 120_000);
});

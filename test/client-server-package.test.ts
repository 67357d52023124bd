import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cjsScript, esmScript, nodeJson, pack, project, typeCheck, typedConsumer, unpack } from "./client-pack-helpers.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "./e2e-helpers.js";
import type { VaultProcess } from "./e2e-helpers.js";

/**
 * "ephemeral-vault/client" from the packed server package (docs/client.md
 * "Install"): the server's tarball and the client's tarball laid out in a
 * project's node_modules as npm installs them, then the server's `./client`
 * export used with import and with require against a vault started here,
 * and type-checked as an ESM and a CommonJS consumer.
 */

const NAME = "ephemeral-vault/client";
let vault: VaultProcess;
let consumer: string;
let serverFiles: string[];
let clientVersion: string;

beforeAll(async () => {
  vault = await startVault(tempDir());
  const out = tempDir("ev-server-pack-");
  const server = pack(out);
  const client = pack(out, ["-w", "packages/client"]);
  serverFiles = server.files;
  consumer = project(join(tempDir("ev-server-consumer-"), "app"), {
    "esm.mjs": esmScript(NAME, "srv/esm"),
    "cjs.cjs": cjsScript(NAME, "srv/cjs"),
    "same.mjs": `import * as a from "ephemeral-vault/client";\nimport * as b from "@ephemeral-vault/client";\nimport { createRequire } from "node:module";\nconst r = createRequire(import.meta.url);\nconsole.log(JSON.stringify({ esm: a.VaultClient === b.VaultClient && a.describeFailure === b.describeFailure, cjs: r("ephemeral-vault/client").VaultClient === r("@ephemeral-vault/client").VaultClient, names: Object.keys(a).sort().join() === Object.keys(b).sort().join() }));\n`,
    "typed.mts": typedConsumer(NAME),
    "typed.cts": typedConsumer(NAME),
    "root.mts": `import { startVault } from "ephemeral-vault";\nimport type { EmbeddedVault, StartVaultOptions } from "ephemeral-vault";\nexport const options: StartVaultOptions = { port: 0, masterKey: "0123456789abcdef" };\nexport const started: Promise<EmbeddedVault> = startVault(options);\n`,
    "root-misuse.mts": `import { startVault } from "ephemeral-vault";\nexport const started = startVault({ port: "eighty" });\n`,
  });
  unpack(server.tarball, join(consumer, "node_modules", "ephemeral-vault"));
  unpack(client.tarball, join(consumer, "node_modules", "@ephemeral-vault", "client"));
  clientVersion = (JSON.parse(readFileSync(join(consumer, "node_modules", "@ephemeral-vault", "client", "package.json"), "utf8")) as { version: string }).version;
}, 180_000);
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

describe("the packed server package's ephemeral-vault/client", () => {
  it("depends on the client package and ships no copy of it: client/ only re-exports", () => {
    const manifest = JSON.parse(readFileSync(join(consumer, "node_modules", "ephemeral-vault", "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies["@ephemeral-vault/client"]).toBe(clientVersion);
    for (const file of ["client/index.js", "client/index.cjs", "client/index.d.ts", "client/index.d.cts"]) expect(serverFiles, file).toContain(file);
    expect(serverFiles.filter((f) => f.startsWith("packages/") || f.startsWith("src/"))).toEqual([]);
    // The server's own code imports the client; only the browser pages (dist/ui) carry the envelope code.
    const serverJs = serverFiles.filter((f) => /^dist\/[^/]+\.js$/.test(f));
    expect(serverJs.length).toBeGreaterThan(0);
    const copies = serverJs.filter((f) => /class VaultClient\b/.test(readFileSync(join(consumer, "node_modules", "ephemeral-vault", f), "utf8")));
    expect(copies).toEqual([]);
  });

  it("works with import (ESM) against a real vault, the very module of @ephemeral-vault/client", () => {
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
    expect(res.output).toContain("node_modules/@ephemeral-vault/client/dist/index.d.cts");
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

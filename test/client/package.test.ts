import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cjsScript, esmScript, installed, misusingConsumer, nodeJson, pack, project, run, typeCheck, typedConsumer } from "../support/client-pack-helpers.js";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

/**
 * The client package on its own (docs/client.md "Install"): packed from
 * packages/client with `npm pack`, installed from the tarball alone into a
 * project of its own, then used with import and with require against a
 * vault started here, and type-checked as an ESM and a CommonJS consumer.
 */

const NAME = "@ephemeral-vault/client";
let vault: VaultProcess;
let consumer: string;
let packed: string[];

beforeAll(async () => {
  vault = await startVault(tempDir());
  const { tarball, files } = pack(tempDir("ev-client-pack-"), ["-w", "packages/client"]);
  packed = files;
  consumer = project(join(tempDir("ev-client-consumer-"), "app"), {
    "esm.mjs": esmScript(NAME, "pkg/esm"),
    "cjs.cjs": cjsScript(NAME, "pkg/cjs"),
    "typed.mts": typedConsumer(NAME),
    "typed.cts": typedConsumer(NAME),
    "misuse.mts": misusingConsumer(NAME),
  });
  // As a user would, but from the tarball and the npm cache only: nothing may be fetched.
  run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], consumer);
}, 180_000);
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

describe("the packed client package", () => {
  it("ships its ESM and CommonJS builds with declarations for each, and declares no dependencies", () => {
    for (const file of ["package.json", "dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts", "README.md", "LICENSE"]) {
      expect(packed, file).toContain(file);
    }
    expect(packed.filter((f) => f.startsWith("src/"))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(consumer, "node_modules", NAME, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest.name).toBe(NAME);
    const server = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
    expect(manifest.version).toBe(server.version);
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) expect(manifest[field], field).toBeUndefined();
  });

  it("installs alone: node_modules holds the client and nothing else (no server, no native build)", () => {
    expect(installed(consumer)).toEqual([NAME]);
  });

  it("works with import (ESM) against a real vault", () => {
    const out = nodeJson(consumer, "esm.mjs", { url: vault.url, token: E2E_MASTER_KEY });
    expect(out.value).toBe("value of pkg/esm");
    expect(out).toMatchObject({ api: true, status: 404, failure: { code: 1 } });
    expect(out.resolved).toBe(`file://${join(consumer, "node_modules", NAME, "dist", "index.js")}`);
  });

  it("works with require (CommonJS) against a real vault", () => {
    const out = nodeJson(consumer, "cjs.cjs", { url: vault.url, token: E2E_MASTER_KEY });
    expect(out.value).toBe("value of pkg/cjs");
    expect(out).toMatchObject({ api: true, status: 404, failure: { code: 1 } });
    expect(out.resolved).toBe(join(consumer, "node_modules", NAME, "dist", "index.cjs"));
  });

  it("type-checks an ESM (.mts) and a CommonJS (.cts) consumer against its own declarations, DOM or Node types", () => {
    const dom = typeCheck(consumer, "tsconfig.json", ["typed.mts", "typed.cts"]);
    expect(dom.status, dom.output).toBe(0);
    // Each module kind gets its own declarations: index.d.ts for import, index.d.cts for require.
    expect(dom.output).toContain(`node_modules/${NAME}/dist/index.d.ts`);
    expect(dom.output).toContain(`node_modules/${NAME}/dist/index.d.cts`);
    const node = typeCheck(consumer, "tsconfig.node.json", ["typed.mts", "typed.cts"], {
      lib: ["ES2022"],
      types: ["node"],
      typeRoots: [join(ROOT, "node_modules", "@types")],
    });
    expect(node.status, node.output).toBe(0);
  }, 120_000);

  it("has real types: a misuse (a value read as a number) does not compile", () => {
    const bad = typeCheck(consumer, "tsconfig.misuse.json", ["misuse.mts"]);
    expect(bad.status).not.toBe(0);
    expect(bad.output).toMatch(/misuse\.mts.*error TS2322/);
  }, 60_000);
});


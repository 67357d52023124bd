import { createHash } from "node:crypto";
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { getAsset } from "node:sea";

/**
 * What the single executable carries besides its code (scripts/build-binary.mjs
 * writes it at build time): each asset's path inside the package layout and
 * its SHA-256, and the SHA-256 of them all, which names the directory.
 */
export interface SeaManifest {
  /** Hex SHA-256 over every asset's path and hash: the directory's name. */
  hash: string;
  version: string;
  /** Asset name -> path relative to the package root ("schema.sql", "dist/ui/share.js", ...) and hex SHA-256. */
  files: Record<string, { path: string; sha256: string }>;
}

declare const __EV_SEA_MANIFEST__: SeaManifest;

/** The manifest the build injected. */
export const MANIFEST: SeaManifest = __EV_SEA_MANIFEST__;

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");

/**
 * Where the executable's files live once written out: a directory laid out
 * like the npm package (schema.sql, schema-pg.sql, dist/ui/*.js,
 * package.json), so the modules that read them by a path relative to their
 * own (db.ts, store/pg/migrate.ts, pages/assets.ts) work unchanged:
 * `$TMPDIR/ephemeral-vault-<uid>/<manifest hash>`.
 */
export function seaRoot(manifest: SeaManifest = MANIFEST): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return join(tmpdir(), `ephemeral-vault-${uid}`, manifest.hash.slice(0, 32));
}

/** The `import.meta.url` the bundled modules see: a module in the root's dist/. */
export function seaModuleUrl(manifest: SeaManifest = MANIFEST): string {
  return pathToFileURL(join(seaRoot(manifest), "dist", "ephemeral-vault.cjs")).href;
}

/**
 * A directory only this user can use: created 0700 when missing; an existing
 * one must be a real directory (not a symlink), owned by this user, with no
 * group or other permission. Otherwise another local user could have put a
 * native addon there for us to load.
 * @throws Error naming the directory when it is not private.
 */
function privateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const st = lstatSync(dir);
  const uid = typeof process.getuid === "function" ? process.getuid() : st.uid;
  if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory of this user (0700, owned by uid ${uid}); remove it, or set TMPDIR to another directory`);
  }
}

/** Writes a file in full under a temporary name, then renames it into place. */
function writeAtomically(path: string, data: Uint8Array, mode: number): void {
  const temp = `${path}.${process.pid}.tmp`;
  const fd = openSync(temp, "w", mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

function hashOnDisk(path: string): string | undefined {
  try {
    return sha256(readFileSync(path));
  } catch {
    return undefined;
  }
}

/**
 * Writes the executable's assets into seaRoot() (first start of this build)
 * and checks every file there against the manifest's SHA-256, each start,
 * before anything is loaded from it.
 * @returns the root directory.
 * @throws Error when the directory is not private, an asset is not the one
 *   built in, or a file cannot be written or does not verify.
 */
export function prepareSeaFiles(manifest: SeaManifest = MANIFEST): string {
  const root = seaRoot(manifest);
  privateDir(dirname(root));
  privateDir(root);
  for (const [name, file] of Object.entries(manifest.files)) {
    const target = join(root, file.path);
    if (hashOnDisk(target) === file.sha256) continue;
    const data = new Uint8Array(getAsset(name));
    if (sha256(data) !== file.sha256) throw new Error(`the executable's asset ${name} does not match its build: the file is damaged`);
    const dirs: string[] = [];
    for (let dir = dirname(target); dir !== root && dir.startsWith(root); dir = dirname(dir)) dirs.unshift(dir);
    for (const dir of dirs) privateDir(dir);
    writeAtomically(target, data, name.endsWith(".node") ? 0o500 : 0o400);
    if (hashOnDisk(target) !== file.sha256) throw new Error(`${target} does not verify after writing it`);
  }
  return root;
}

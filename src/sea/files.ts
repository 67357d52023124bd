import { createHash } from "node:crypto";
import { closeSync, constants, existsSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, writeSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { getAsset } from "node:sea";

// The one file the single executable writes to disk: better-sqlite3's native addon, which
// the dynamic loader can only take from a file (docs/deploy.md, "The single executable").
// Every other file (schemas, page scripts) is read from the embedded assets in memory
// (src/sea/package-files.ts).

/**
 * What the build recorded about the addon (scripts/build-binary.mjs): its asset name and
 * hex SHA-256, which also names its directory (a new build never meets an old file).
 */
export interface SeaManifest {
  version: string;
  addon: { asset: string; sha256: string };
}

declare const __EV_SEA_MANIFEST__: SeaManifest;

/** The manifest the build injected. */
export const MANIFEST: SeaManifest = __EV_SEA_MANIFEST__;

/** The setting that chooses the directory the addon is written to (docs/deploy.md). */
export const DIR_SETTING = "VAULT_BINARY_DIR";

const sha256 = (data: Uint8Array): string => createHash("sha256").update(data).digest("hex");
const uid = (): number => (typeof process.getuid === "function" ? process.getuid() : 0);

/**
 * Where the addon's directory lives, in this order: `VAULT_BINARY_DIR` (an absolute
 * path, used as it is); `$XDG_RUNTIME_DIR/ephemeral-vault` (the per-user runtime
 * directory, /run/user/<uid>); `$XDG_CACHE_HOME/ephemeral-vault` or
 * `~/.cache/ephemeral-vault`. `fallback` is `$TMPDIR/ephemeral-vault-<uid>`, used only
 * when the cache directory cannot be created (a home that does not exist or is read-only).
 * @param env the environment (process.env)
 * @param home the user's home directory (os.homedir())
 * @throws Error when VAULT_BINARY_DIR is set but not absolute.
 */
export function addonBaseDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): { dir: string; fallback?: string } {
  const chosen = env[DIR_SETTING];
  if (chosen !== undefined && chosen !== "") {
    if (!isAbsolute(chosen)) throw new Error(`${DIR_SETTING} must be an absolute path, not ${chosen}`);
    return { dir: resolve(chosen) };
  }
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime !== undefined && isAbsolute(runtime)) return { dir: join(runtime, "ephemeral-vault") };
  const cache = env.XDG_CACHE_HOME !== undefined && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(home, ".cache");
  return { dir: join(cache, "ephemeral-vault"), fallback: join(tmpdir(), `ephemeral-vault-${uid()}`) };
}

/**
 * Each directory from `/` down to `dir`, by name and after resolving symlinks, must be
 * one that no other user can change: owned by this user or root, and without group or
 * other write permission unless it is sticky (as /tmp is, where others cannot rename or
 * remove what is ours). Otherwise another local user could swap the directory, and the
 * addon in it, between the check and the load.
 * @throws Error naming the first directory that others can change.
 */
export function checkAncestors(dir: string): void {
  const me = uid();
  const chains = [resolve(dir), realpathSync(dir)];
  for (const path of chains) {
    for (let p = path; ; p = dirname(p)) {
      const st = lstatSync(p);
      // A symlink's own mode means nothing; who may replace it is decided by its directory, checked next.
      if (!st.isSymbolicLink()) {
        const writableByOthers = (st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0;
        if ((st.uid !== me && st.uid !== 0) || writableByOthers) {
          throw new Error(
            `${p} can be changed by other users (owner uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)}), so the native addon below it cannot be trusted; set ${DIR_SETTING} to a directory only you and root can change`,
          );
        }
      }
      if (dirname(p) === p) break;
    }
  }
}

/**
 * A directory only this user can use: created 0700 when missing; an existing one must be
 * a real directory (not a symlink), owned by this user, with no group or other permission.
 * @throws Error naming the directory when it is not private (or mkdir's error).
 */
function privateDir(dir: string, recursive = false): void {
  try {
    mkdirSync(dir, { mode: 0o700, recursive });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== uid() || (st.mode & 0o077) !== 0) {
    throw new Error(`${dir} is not a private directory of this user (0700, owned by uid ${uid()}); remove it, or set ${DIR_SETTING} to another directory`);
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

/**
 * The directory that holds the addon (`<base>/<first 32 hex of its SHA-256>`), created
 * private and checked with its ancestors (checkAncestors).
 * @throws Error when a directory is not private or can be changed by others.
 */
export function addonDir(manifest: SeaManifest = MANIFEST, env: NodeJS.ProcessEnv = process.env): string {
  const { dir, fallback } = addonBaseDir(env);
  let base = dir;
  try {
    // The cache directory's parents (~/.cache) may be missing: made 0700 like the rest.
    if (fallback !== undefined) mkdirSync(dirname(base), { recursive: true, mode: 0o700 });
    privateDir(base);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (fallback === undefined || !["EACCES", "EROFS", "ENOENT", "ENOTDIR", "EPERM"].includes(code ?? "")) throw err;
    base = fallback;
    privateDir(base);
  }
  checkAncestors(base);
  const root = join(base, manifest.addon.sha256.slice(0, 32));
  privateDir(root);
  return root;
}

/**
 * Opens the addon for loading: written from the embedded asset when missing or not the
 * one built in, then opened without following a symlink and hashed through that open
 * descriptor. The caller loads the returned `path` (on Linux `/proc/self/fd/<n>`: the very
 * file that was hashed, whatever happens to the name since) and then calls `close`.
 * @returns the path to load and the function that releases the descriptor.
 * @throws Error when a directory is not private, the embedded asset is damaged, or the
 *   file does not verify after writing it.
 */
export function openVerifiedAddon(manifest: SeaManifest = MANIFEST): { path: string; close: () => void } {
  const file = join(addonDir(manifest), "better_sqlite3.node");
  const open = (): { fd: number; ok: boolean } => {
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return { fd: -1, ok: false };
    }
    const st = fstatSync(fd);
    const ok = st.isFile() && st.uid === uid() && (st.mode & 0o022) === 0 && sha256(readFileSync(fd)) === manifest.addon.sha256;
    return { fd, ok };
  };
  let opened = open();
  if (!opened.ok) {
    if (opened.fd >= 0) closeSync(opened.fd);
    const data = new Uint8Array(getAsset(manifest.addon.asset));
    if (sha256(data) !== manifest.addon.sha256) throw new Error(`the executable's asset ${manifest.addon.asset} does not match its build: the file is damaged`);
    writeAtomically(file, data, 0o500);
    opened = open();
    if (!opened.ok) {
      if (opened.fd >= 0) closeSync(opened.fd);
      throw new Error(`${file} does not verify after writing it`);
    }
  }
  const { fd } = opened;
  const byDescriptor = `/proc/self/fd/${fd}`;
  return { path: existsSync(byDescriptor) ? byDescriptor : file, close: () => closeSync(fd) };
}

/**
 * At start: checks the addon's directory and writes and verifies the addon, so a bad
 * directory stops the start with its name (exit 1) before any command runs.
 * @throws Error as openVerifiedAddon.
 */
export function prepareSeaFiles(manifest: SeaManifest = MANIFEST): void {
  openVerifiedAddon(manifest).close();
}

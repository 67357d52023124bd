import { join } from "node:path";
import Database from "better-sqlite3";
import type { Options } from "better-sqlite3";
import { MANIFEST, prepareSeaFiles } from "./files.js";

// In the single executable, `better-sqlite3` resolves to this module
// (scripts/build-binary.mjs): the same class, whose native addon comes from
// the executable's verified files instead of node_modules.

/** The asset name of better-sqlite3's native addon. */
export const ADDON_ASSET = "better_sqlite3.node";

let addon: object | undefined;

/**
 * better-sqlite3's addon, loaded once: prepareSeaFiles() has written it into
 * the private directory and checked its SHA-256 just before the load.
 * @throws Error when the file does not verify or cannot be loaded.
 */
function nativeAddon(): object {
  if (addon === undefined) {
    const root = prepareSeaFiles();
    const file = MANIFEST.files[ADDON_ASSET];
    if (file === undefined) throw new Error(`the executable carries no ${ADDON_ASSET}`);
    const module = { exports: {} as object };
    process.dlopen(module, join(root, file.path));
    addon = module.exports;
  }
  return addon;
}

/** better-sqlite3's Database with the executable's addon as its `nativeBinding`. */
class SeaDatabase extends Database {
  constructor(filename?: string | Buffer, options: Options = {}) {
    super(filename, Object.assign({}, options, { nativeBinding: nativeAddon() as unknown as string }));
  }
}

// biome-ignore lint/style/noDefaultExport: it stands in for better-sqlite3, whose class is its default export
export default SeaDatabase;

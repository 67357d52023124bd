import Database from "better-sqlite3";
import type { Options } from "better-sqlite3";
import { openVerifiedAddon } from "./files.js";

// In the single executable, `better-sqlite3` resolves to this module
// (scripts/build-binary.mjs): the same class, whose native addon comes from
// the executable's verified file instead of node_modules.

let addon: object | undefined;

/**
 * better-sqlite3's addon, loaded once, from the file whose SHA-256 was checked
 * through the descriptor it is loaded by (src/sea/files.ts openVerifiedAddon).
 * @throws Error when the file does not verify or cannot be loaded.
 */
function nativeAddon(): object {
  if (addon === undefined) {
    const file = openVerifiedAddon();
    try {
      const module = { exports: {} as object };
      process.dlopen(module, file.path);
      addon = module.exports;
    } finally {
      file.close();
    }
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

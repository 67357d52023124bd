import { getAsset } from "node:sea";

// In the single executable, src/package-files.ts resolves to this module
// (scripts/build-binary.mjs): the package's files come from the executable's
// embedded assets, in memory, never from a file on disk. The asset names are the
// files' paths in the package ("schema.sql", "dist/ui/share.js").

/**
 * A file of the package, from the executable's embedded assets, as UTF-8 text.
 * @param path relative to the package root, with `/`: "schema.sql", "dist/ui/share.js"
 * @throws Error naming the path when the executable does not carry it (the build
 *   refuses to leave out a page asset, so this means a file outside the list).
 */
export function readPackageFile(path: string): string {
  try {
    return getAsset(path, "utf8");
  } catch {
    throw new Error(`ephemeral-vault: the executable carries no ${path}`);
  }
}

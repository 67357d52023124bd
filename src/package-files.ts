import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The files the package ships beside its code (schema.sql, schema-pg.sql, dist/ui/*.js), read by
// their path in the package. In the single executable this module is replaced by
// src/sea/package-files.ts, which answers the same paths from the executable's embedded assets
// (scripts/build-binary.mjs; docs/deploy.md, "The single executable").

/**
 * The package's root: the first directory above this module holding package.json (this file
 * runs from src/ in the tests and from dist/ once built).
 * @throws Error when no package.json is above it.
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("ephemeral-vault: package.json not found above its modules");
    dir = up;
  }
}

/**
 * A file of the package as UTF-8 text.
 * @param path relative to the package root, with `/`: "schema.sql", "dist/ui/share.js"
 * @throws Error naming the file when it is missing (dist/ui before `npm run build`).
 */
export function readPackageFile(path: string): string {
  const file = join(packageRoot(), path);
  if (!existsSync(file)) throw new Error(`ephemeral-vault: ${file} is missing${path.startsWith("dist/") ? ": run npm run build" : ""}`);
  return readFileSync(file, "utf8");
}

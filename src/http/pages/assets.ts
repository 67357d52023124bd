import { readFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { STYLESHEET } from "./style.js";

/** A page asset: its body and content type. */
export interface Asset {
  body: string;
  type: string;
}

/**
 * The pages' icon, so a browser's automatic GET /favicon.ico (outside the
 * pages, so answered 401 and counted by the brute-force guard) never happens.
 */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="3" y="7" width="10" height="8" rx="1" fill="#0b57d0"/><path d="M5 7V5a3 3 0 0 1 6 0v2" stroke="#0b57d0" stroke-width="1.6" fill="none"/></svg>';

/** The browser scripts the pages load, built by tsup from src/ui into dist/ui. */
export const SCRIPT_ASSETS = ["share.js", "create.js", "console.js"] as const;

/**
 * The package's root: the first directory above this module holding
 * package.json (this file runs from src/http/pages in the tests and from dist once
 * built).
 */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("ephemeral-vault: package.json not found above the pages module");
    dir = up;
  }
}

/**
 * The pages' assets, by file name: the stylesheet (from src/http/pages/style.ts), the icon
 * and the browser scripts from dist/ui (built by `npm run build`), read once.
 * @throws Error naming the missing file when the scripts were not built.
 */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>([
    ["vault.css", { body: STYLESHEET, type: "text/css; charset=utf-8" }],
    ["favicon.svg", { body: FAVICON, type: "image/svg+xml" }],
  ]);
  const dir = join(packageRoot(), "dist", "ui");
  for (const name of SCRIPT_ASSETS) {
    const file = join(dir, name);
    if (!existsSync(file)) throw new Error(`ephemeral-vault: the page script ${file} is missing: run npm run build`);
    assets.set(name, { body: readFileSync(file, "utf8"), type: "text/javascript; charset=utf-8" });
  }
  return assets;
}

import { readPackageFile } from "../../package-files.js";
import pageAssets from "./page-assets.json" with { type: "json" };
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

/** The name of a browser script a page loads: a key of page-assets.json's `scripts`. */
export type PageScript = keyof typeof pageAssets.scripts;

/**
 * The browser scripts the pages load, from the one list of them (page-assets.json), which
 * tsup.config.ts builds into dist/ui and scripts/build-binary.mjs embeds in the single executable.
 */
export const SCRIPT_ASSETS = Object.keys(pageAssets.scripts) as PageScript[];

/**
 * The pages' assets, by file name: the stylesheet (from src/http/pages/style.ts), the icon
 * and the browser scripts of dist/ui (built by `npm run build`; in the single executable,
 * its embedded copies, from memory), read once.
 * @throws Error naming the missing file when the scripts were not built.
 */
export function loadAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>([
    ["vault.css", { body: STYLESHEET, type: "text/css; charset=utf-8" }],
    ["favicon.svg", { body: FAVICON, type: "image/svg+xml" }],
  ]);
  for (const name of SCRIPT_ASSETS) {
    assets.set(name, { body: readPackageFile(`dist/ui/${name}`), type: "text/javascript; charset=utf-8" });
  }
  return assets;
}

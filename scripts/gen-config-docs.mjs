// npm run gen:config-docs: writes the settings table of docs/configuration.md
// from src/config/settings.ts (src/config/render.ts), between its two marker
// comments. test/config/docs.test.ts checks that the page holds what this writes.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const outDir = join(root, "node_modules", ".cache", "gen-config-docs");
mkdirSync(outDir, { recursive: true });
const outfile = join(outDir, "render.mjs");
// Bundled with its packages left as imports, written under node_modules so they resolve.
await build({ entryPoints: [join(root, "src", "config", "render.ts")], bundle: true, platform: "node", format: "esm", packages: "external", outfile, logLevel: "warning" });
const { withSettingsDocTable } = await import(pathToFileURL(outfile).href);
const page = join(root, "docs", "configuration.md");
const before = readFileSync(page, "utf8");
const after = withSettingsDocTable(before);
writeFileSync(page, after);
console.log(before === after ? "docs/configuration.md: settings table unchanged" : "docs/configuration.md: settings table written");

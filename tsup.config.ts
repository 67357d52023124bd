import { defineConfig } from "tsup";
import pageAssets from "./src/http/pages/page-assets.json" with { type: "json" };

// The client package (packages/client) is built first, by its own tsup config (npm run build); the
// server imports it as its dependency @ephemeral-vault/client and never bundles it into dist/
// ("ephemeral-vault/client" is the client/ folder: the package re-exported, docs/client.md).
export default defineConfig([
  {
    // internal: the assembly's parts for scripts/ and bench/ (src/internal.ts), not published.
    entry: { cli: "src/cli.ts", index: "src/index.ts", internal: "src/internal.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    outDir: "dist",
    // Everything but dist/ui, which the second build writes (the two run side by side),
    // and the single executable with its work files (npm run build:binary).
    clean: ["!ui/**", "!ephemeral-vault-*", "!sea/**"],
    // Source maps for this repository's own debugging; package.json "files" leaves them out of the
    // published package (docs/deploy.md, "The npm package").
    sourcemap: true,
    splitting: true,
    // Type declarations for the root only: the embedding API (src/index.ts).
    dts: { entry: { index: "src/index.ts" } },
  },
  {
    // The pages' browser scripts (src/ui), served by the vault itself from dist/ui
    // (src/http/pages/assets.ts): one self-contained file per page, no module loader; the
    // envelope code of the client package is bundled in.
    // One file per entry of src/http/pages/page-assets.json, the one list of page scripts
    // (the single executable embeds the same list: scripts/build-binary.mjs).
    entry: Object.fromEntries(Object.entries(pageAssets.scripts).map(([name, source]) => [name.replace(/\.js$/, ""), source])),
    format: ["iife"],
    target: ["chrome111", "firefox111", "safari16"],
    platform: "browser",
    outDir: "dist/ui",
    outExtension: () => ({ js: ".js" }),
    noExternal: ["@ephemeral-vault/client"],
    clean: false,
    minify: true,
    sourcemap: false,
  },
]);

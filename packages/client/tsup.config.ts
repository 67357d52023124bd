import { defineConfig } from "tsup";

// The client package (docs/client.md "Install"): one ESM file and one CommonJS file, each with its
// type declarations (index.d.ts, index.d.cts); no dependencies, no Node.js built-ins (fetch and WebCrypto only).
export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm", "cjs"],
  target: "es2022",
  platform: "neutral",
  outDir: "dist",
  clean: true,
  sourcemap: false,
  splitting: false,
  dts: true,
});

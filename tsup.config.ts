import { defineConfig } from "tsup";

export default defineConfig({
  entry: { cli: "src/cli.ts", index: "src/index.ts", client: "src/client/index.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  outDir: "dist",
  clean: true,
  sourcemap: true,
  splitting: true,
  // Type declarations for the client entry only ("ephemeral-vault/client").
  dts: { entry: { client: "src/client/index.ts" } },
});

/**
 * The package's root, `ephemeral-vault` (import or require): the embedding API
 * of docs/embedding.md and nothing else. Its declarations (dist/index.d.ts) name
 * none of the server's dependencies but pino (the `logger` option takes a pino
 * logger) and the bundled client package: a consumer type-checks them with
 * `skipLibCheck: false` (test/package/package-consumer.sqlite.test.ts). The assembly's parts
 * (createVault, the engines, the CLI's main) are internal: src/internal.ts.
 */
export { version } from "./assembly/vault.js";
export { startVault } from "./assembly/embed.js";
export type { EmbeddedVault, StartVaultOptions, VaultSettings } from "./assembly/embed.js";
export { ConfigError } from "./config.js";

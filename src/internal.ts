/**
 * The assembly's parts, for this repository's own scripts and benchmarks
 * (scripts/gen-client.mjs, bench/): built to dist/internal.js, with no type
 * declarations, in no export of package.json and not in the published
 * package. What embedders get is src/index.ts (docs/embedding.md).
 */
export { createVault, version } from "./assembly/vault.js";
export { SqliteEngine } from "./store/sqlite/engine.js";
export { startServer } from "./assembly/server.js";
export { loadConfig, ConfigError } from "./config.js";
export { openDatabase } from "./store/sqlite/db.js";
export { openPgEngine } from "./store/pg/engine.js";
export { ValueCipher } from "./crypto/cipher.js";
export { main } from "./cli.js";
export { createLogger } from "./log/log.js";

/** Programmatic entry points, for embedding and tests. */
export { createVault, version } from "./vault.js";
export type { Vault, VaultOptions } from "./vault.js";
export { SqliteEngine } from "./store/sqlite/engine.js";
export type { SqliteEngineOptions } from "./store/sqlite/engine.js";
export type { Engine } from "./store/engine.js";
export { startVault } from "./embed.js";
export type { EmbeddedVault, StartVaultOptions, VaultSettings } from "./embed.js";
export { startServer } from "./server.js";
export type { RunningServer, StartOptions } from "./server.js";
export { loadConfig, ConfigError } from "./config.js";
export type { Config } from "./config.js";
export { openDatabase } from "./store/sqlite/db.js";
export { ValueCipher } from "./crypto/cipher.js";
export { main } from "./cli.js";
export { createLogger } from "./log/log.js";

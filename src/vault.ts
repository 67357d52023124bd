import type { Hono } from "hono";
import { createApp } from "./app.js";
import type { AppEnv } from "./context.js";
import type { ValueCipher } from "./crypto.js";
import type { Db } from "./db.js";
import type { EventSink } from "./domain/events.js";
import { SecretLifecycle } from "./domain/secrets.js";
import { GroupCommit } from "./group-commit.js";
import type { Logger } from "./log.js";
import { version } from "./version.js";

/** What a vault is built from: everything injected, nothing global. */
export interface VaultOptions {
  db: Db;
  cipher: ValueCipher;
  log: Logger;
  masterKey: string;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Active-secret limit, or null when a valid license lifts it. */
  activeLimit: () => number | null;
  publicUrl: string;
  maxValueBytes: number;
  trustProxy: boolean;
}

/** A built vault: the HTTP app and the parts background work and tests use. */
export interface Vault {
  app: Hono<AppEnv>;
  tx: GroupCommit;
  secrets: SecretLifecycle;
}

/** Where events go until the audit log and the webhook outbox are wired in. */
const noEvents: EventSink = {
  secretEvent() {},
  secretsPruned() {},
};

/**
 * Builds a vault over an open, migrated database: the group commit, the
 * secret lifecycle and the Hono app. Used by server.ts and by the tests
 * (on `:memory:`, with a fake clock).
 */
export function createVault(options: VaultOptions): Vault {
  const tx = new GroupCommit(options.db);
  const secrets = new SecretLifecycle({
    db: options.db,
    cipher: options.cipher,
    events: noEvents,
    now: options.now,
    activeLimit: options.activeLimit,
  });
  const app = createApp({
    db: options.db,
    tx,
    secrets,
    log: options.log,
    masterKey: options.masterKey,
    resolvers: [],
    publicUrl: options.publicUrl,
    maxValueBytes: options.maxValueBytes,
    trustProxy: options.trustProxy,
    version,
  });
  return { app, tx, secrets };
}

export { version };

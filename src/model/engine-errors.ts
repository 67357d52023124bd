/*
 * The storage errors both engines throw, in a module neither engine owns
 * (docs/architecture.md, "Layers"): the HTTP edge maps them (http/errors.ts)
 * without importing an engine.
 */

/** Thrown by a unit of work's run() once the engine is shutting down (the graceful stop). */
export class ClosedError extends Error {
  constructor() {
    super("the vault is shutting down");
    this.name = "ClosedError";
  }
}

/** Thrown at start when the root keys cannot open this database (docs/configuration.md, VAULT_ENCRYPTION_KEY). */
export class WrongKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WrongKeyError";
  }
}

/**
 * The database could not be reached, or the connection a unit of work ran
 * on was lost before its COMMIT was confirmed (a failover, a restarted
 * server, a terminated backend, a network cut): the unit's outcome is
 * unknown to the caller, so nothing may be acknowledged. The HTTP layer
 * answers it 503 with Retry-After (docs/scaling.md "When the database goes
 * away"); the engine reconnects on the next unit of work. `cause` is the
 * driver's error.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`the database is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "DatabaseUnavailableError";
  }
}

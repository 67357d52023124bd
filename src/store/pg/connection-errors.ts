/**
 * Which driver errors mean "the connection to PostgreSQL is gone or cannot
 * be made" rather than "this statement failed": the node answers those 503
 * and reconnects (docs/scaling.md, "When the database goes away").
 */

/** Socket-level error codes of Node.js (connect refused, reset, unreachable, name lookup). */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * SQLSTATEs of a server that is going away or not ready (PostgreSQL docs,
 * "PostgreSQL Error Codes"): admin_shutdown (pg_terminate_backend, a fast
 * shutdown), crash_shutdown, cannot_connect_now (starting up, shutting down,
 * in recovery), too_many_connections, read_only_sql_transaction (the
 * connection reached a standby: a failover's new primary not yet promoted,
 * or a demoted one), and every connection_exception (class 08).
 */
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300", "25006"]);

/** node-postgres's own messages for a connection that ended or cannot be used (pg and pg-pool). */
const DRIVER_MESSAGES = [
  "Connection terminated",
  "not queryable",
  "timeout exceeded when trying to connect",
  "Connection terminated due to connection timeout",
];

/**
 * True when `err` says the connection failed (rather than the statement):
 * a socket error code, a SQLSTATE of SERVER_CODES or class 08, or one of
 * node-postgres's connection messages.
 * @param err anything thrown by pg or pg-pool.
 */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  return DRIVER_MESSAGES.some((m) => err.message.includes(m));
}

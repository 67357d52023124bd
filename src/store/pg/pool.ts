import pg from "pg";
import { redactCredentials, redactUrl } from "./redact.js";

export { redactUrl };

/** int8 (bigint), and the `count(*)` results it types: parsed to JS numbers (ids and ms times stay below 2^53). */
const INT8_OID = 20;

/**
 * A pg Client that closes its socket when connecting fails. node-postgres
 * leaves the socket open after a failure it detects itself (SCRAM without a
 * password: "client password must be a string"), and pg-pool drops such a
 * client without ending it, so a refused start or `audit verify` would never
 * exit.
 */
class ClosingClient extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
  override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | undefined {
    if (callback === undefined) {
      return super.connect().catch(async (err: unknown) => {
        await this.end().catch(() => {});
        throw err;
      });
    }
    super.connect((err: Error | null) => {
      if (err) this.end().catch(() => {});
      (callback as (err: Error | null, c?: pg.Client) => void)(err, this);
    });
    return undefined;
  }
}

/** How long a new connection may take before the unit of work gives up with 503, milliseconds. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** Idle time before a pooled connection's first TCP keepalive probe, milliseconds. */
export const KEEPALIVE_IDLE_MS = 10_000;

/**
 * Opens the node's pool: `connectionString` is the URL as given, so its
 * options (`sslmode`, host, port, database, `application_name`) are
 * honoured by node-postgres; int8 values are parsed to numbers by this
 * pool's own type parser (the global pg.types stays untouched).
 * Checks one connection (`SELECT 1`) before returning. Every client gets an
 * `'error'` listener, so a connection that dies (a failover, a restarted
 * server, a terminated backend) fails its statements instead of ending the
 * process; connecting gives up after CONNECT_TIMEOUT_MS; TCP keepalive is on;
 * each connection is pipelined (node-postgres `pipeline`: statements go out
 * without waiting for the previous one's answer, each with its own Sync, so
 * one failing never takes the next one's answer); a unit of work sends the
 * statements of one tick in one write (store/pg/batch/cork.ts).
 * @param options.url postgres:// or postgresql:// URL (VAULT_DATABASE_URL).
 * @param options.poolSize most connections (VAULT_DATABASE_POOL_SIZE).
 * @throws Error naming the redacted URL when the database cannot be reached.
 */
export async function openPgPool(options: { url: string; poolSize: number }): Promise<pg.Pool> {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize,
    Client: ClosingClient,
    // A black-holed network (no RST) must fail a request, not hang it: 503 after this long.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // TCP keepalive finds an idle connection whose peer vanished without closing it (a failed-over
    // host): first probe after KEEPALIVE_IDLE_MS, then the kernel's interval and count.
    keepAlive: true,
    // Pipelined: a statement is sent without waiting for the previous one's answer, so BEGIN and the
    // write-behind statements ride the next statement's round trip (store/pg/batch/write-behind.ts).
    pipeline: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client's error (a restarted server) must not crash the process: pg-pool drops that client.
  pool.on("error", () => {});
  // A checked-out client's error (its backend terminated, the server stopped mid-request) has no
  // listener of pg-pool's: without this one it is an unhandled 'error' event that ends the process.
  // The query in flight rejects with it, and the unit of work releases the client with it.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  try {
    await pool.query("SELECT 1");
  } catch (err) {
    await pool.end().catch(() => {});
    throw new Error(`cannot reach the database at ${redactUrl(options.url)}: ${redactCredentials((err as Error).message, options.url)}`);
  }
  return pool;
}

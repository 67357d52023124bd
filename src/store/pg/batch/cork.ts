import type pg from "pg";
import type { Queryable } from "./queryable.js";

/** What a corked connection needs of a client's socket (a net.Socket or tls.TLSSocket). */
interface Corkable {
  cork(): void;
  uncork(): void;
  writable: boolean;
}

/**
 * A pooled client's connection that writes the statements it is given in
 * one event-loop tick in one system call (docs/performance.md,
 * "PostgreSQL"): its first statement of a tick corks the socket, and the
 * socket is uncorked when the tick's microtasks have run
 * (process.nextTick). On the pipelined connection a counted read's BEGIN,
 * subscribers and guarded UPDATE then go out in one write instead of three,
 * and the audit append with the COMMIT in one instead of two. Nothing waits
 * longer: the uncork comes before the event loop goes on to I/O.
 *
 * It is the Queryable a unit of work sends its BEGIN, COMMIT and its stores'
 * statements through (store/pg/batch/unit-of-work.ts); the client itself is
 * left as it is. A client without a socket that can be corked is queried
 * as it is.
 */
export class CorkedConnection implements Queryable {
  private corked = false;
  private readonly socket: Corkable | undefined;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket?.uncork();
  };

  /** @param client a pool's client, checked out by the unit of work. */
  constructor(private readonly client: pg.PoolClient) {
    const stream = (client as unknown as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
    this.socket = typeof stream?.cork === "function" && typeof stream.uncork === "function" ? (stream as Corkable) : undefined;
  }

  /**
   * client.query, after corking the socket for the rest of the tick.
   * @throws (rejects) the statement's error, as client.query does.
   */
  query: Queryable["query"] = ((...args: unknown[]): unknown => {
    const socket = this.socket;
    if (socket !== undefined && !this.corked && socket.writable) {
      this.corked = true;
      socket.cork();
      process.nextTick(this.uncork);
    }
    return (this.client as unknown as { query: (...a: unknown[]) => unknown }).query(...args);
  }) as Queryable["query"];
}

const connections = new WeakMap<pg.PoolClient, CorkedConnection>();

/**
 * The corked connection of `client`, one per pooled client (the same object
 * for each unit that checks the client out, so engine state kept per
 * connection stays with it).
 */
export function corkedConnection(client: pg.PoolClient): CorkedConnection {
  let connection = connections.get(client);
  if (connection === undefined) {
    connection = new CorkedConnection(client);
    connections.set(client, connection);
  }
  return connection;
}

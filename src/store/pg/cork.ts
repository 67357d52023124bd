import type pg from "pg";

/** What corkPerTick needs of a client's socket (a net.Socket or tls.TLSSocket). */
interface Corkable {
  cork(): void;
  uncork(): void;
  writable: boolean;
}

/**
 * Makes `client` write the statements it is given in one event-loop tick in
 * one system call (docs/performance.md, "PostgreSQL"): its first statement
 * of a tick corks the socket, and the socket is uncorked when the tick's
 * microtasks have run (process.nextTick). On the pipelined connection a
 * counted read's BEGIN, subscribers and guarded UPDATE then go out in one
 * write instead of three, and the audit append with the COMMIT in one
 * instead of two: a CPU profile of spread reads showed about a third of the
 * node's CPU in those socket writes. Nothing waits longer: the uncork comes
 * before the event loop goes on to I/O.
 * @param client a pool's client, at its 'connect' event; a client without a
 *   socket that can be corked is left as it is.
 */
export function corkPerTick(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
  if (typeof stream?.cork !== "function" || typeof stream.uncork !== "function") return;
  const socket = stream as Corkable;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    if (!corked && socket.writable) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return query(...args);
  };
}

import type { Server, Socket } from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import { limiterKey } from "./failed-auth.js";

/**
 * True for the addresses the vault's own machine connects from by default:
 * 127.0.0.1 and ::1 (also written IPv4-mapped, ::ffff:127.0.0.1). A local
 * CLI, a health check on the host or a reverse proxy on the same machine
 * uses them; the other 127.0.0.0/8 addresses come only from a client that
 * binds one on purpose, and are capped like any address (docs/deploy.md).
 */
export function isLocalPeer(address: string): boolean {
  return address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1";
}

/**
 * Caps the open connections of one client address (VAULT_MAX_CONNECTIONS_PER_IP,
 * docs/configuration.md), so that one client holding slow or idle connections
 * cannot take every slot of VAULT_MAX_CONNECTIONS and keep everyone else
 * (health checks included) out. A connection over the cap is closed as soon
 * as it is accepted, before anything is read from it.
 *
 * Addresses are counted as the brute-force guard counts them (failed-auth.ts
 * limiterKey): IPv4 one by one, IPv6 by its /64. The local peer (isLocalPeer)
 * is not capped. Memory: one map entry per address with open connections,
 * so at most VAULT_MAX_CONNECTIONS entries.
 *
 * @param maxPerAddress open connections per address at most; 0 turns the cap off.
 * @param onRefused called with the address's key for each refused connection.
 */
export function capConnectionsPerAddress(server: Server, maxPerAddress: number, onRefused: (key: string) => void): void {
  if (maxPerAddress <= 0) return;
  const open = new Map<string, number>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    // Closed already (no address), or the vault's own machine.
    if (address === undefined || isLocalPeer(address)) return;
    const key = limiterKey(address) ?? address;
    const count = open.get(key) ?? 0;
    if (count >= maxPerAddress) {
      socket.destroy();
      onRefused(key);
      return;
    }
    open.set(key, count + 1);
    socket.once("close", () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left > 0) open.set(key, left);
      else open.delete(key);
    });
  });
}

/**
 * The TCP socket under a request's socket: over HTTPS the request has the
 * TLSSocket, while the server's "connection" event gave the net.Socket it
 * wraps (Node's TLSSocket keeps it as `_parent`); over HTTP they are the same.
 */
function transportOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}

/** Connections beyond VAULT_MAX_CONNECTIONS kept for the local peer (isLocalPeer): health checks on the host. */
export const LOCAL_RESERVE = 8;

/**
 * Bounds the open connections of an HTTP server to `maxConnections`
 * (VAULT_MAX_CONNECTIONS, docs/operations.md "Connections") so that slow
 * clients cannot keep everyone else out:
 *
 * - each connection is tracked as waiting (accepted, or idle after an
 *   answer, with no complete request headers yet) or busy (its request's
 *   headers arrived, the answer not yet finished);
 * - when a connection arrives with every slot taken, the connection that
 *   has waited longest is closed to make room: a client dribbling its
 *   headers (slowloris) or idling on keep-alive holds its slot only until
 *   someone needs it; busy connections are never evicted;
 * - when every slot is busy, the newcomer is closed, except the local peer
 *   (127.0.0.1, ::1), which has LOCAL_RESERVE slots beyond the limit, so a
 *   health check on the host is answered under any load.
 *
 * `server` is an HTTP or HTTPS server (its "request" events are read; over
 * HTTPS a connection is counted from its TCP accept, before the handshake). Node's own hard limit (server.maxConnections) is set to maxConnections +
 * LOCAL_RESERVE. Register after capConnectionsPerAddress (a socket it
 * closed is not counted).
 * @param onEvicted called for each connection closed to make room.
 * @param onRefused called for each newcomer closed because every slot is busy.
 */
export function evictWaitingConnections(
  server: Server,
  maxConnections: number,
  onEvicted: () => void,
  onRefused: () => void,
): void {
  server.maxConnections = maxConnections + LOCAL_RESERVE;
  // Insertion order is the order connections started waiting: the first waiting entry is the oldest.
  const waiting = new Set<Socket>();
  const busy = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    if (socket.destroyed) return;
    if (waiting.size + busy.size >= maxConnections) {
      const oldest = waiting.values().next().value;
      if (oldest !== undefined) {
        waiting.delete(oldest);
        oldest.destroy();
        onEvicted();
      } else if (!(socket.remoteAddress !== undefined && isLocalPeer(socket.remoteAddress))) {
        socket.destroy();
        onRefused();
        return;
      }
    }
    waiting.add(socket);
    socket.once("close", () => {
      waiting.delete(socket);
      busy.delete(socket);
    });
  });
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = transportOf(req.socket);
    if (!waiting.delete(socket)) return;
    busy.add(socket);
    res.once("finish", () => {
      if (!busy.delete(socket) || socket.destroyed) return;
      waiting.add(socket);
    });
  });
}

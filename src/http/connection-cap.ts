import type { Server, Socket } from "node:net";
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

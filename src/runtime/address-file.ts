import { renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The file in the data dir that holds a running vault's address (docs/cli.md "Connecting"). */
export const ADDRESS_FILE_NAME = "address";

/**
 * The address a client on this machine uses to reach a vault bound to
 * `host` on `port`: the loopback form for a wildcard bind (`0.0.0.0` ->
 * 127.0.0.1, `::` -> [::1]), the bound address itself when it is a loopback
 * one, and undefined for any other host (the client takes only loopback
 * addresses from the file, like the local master key). `https://` when the
 * vault serves TLS (VAULT_TLS_CERT).
 */
export function localAddressOf(host: string, port: number, tls = false): string | undefined {
  const scheme = tls ? "https" : "http";
  if (host === "0.0.0.0" || /^127\./.test(host) || host === "localhost") return `${scheme}://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  if (host === "::" || host === "::1") return `${scheme}://[::1]:${port}`;
  return undefined;
}

/**
 * Writes `<dataDir>/address` (mode 0600, through a temporary file and a
 * rename, so a client never reads half of it) with `addr` and a newline.
 * @returns a function that removes the file (at a clean stop); it ignores a file already gone.
 * @throws the fs error when the file cannot be written.
 */
export function writeAddressFile(dataDir: string, addr: string): () => void {
  const file = join(dataDir, ADDRESS_FILE_NAME);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${addr}\n`, { mode: 0o600 });
  renameSync(temp, file);
  return () => rmSync(file, { force: true });
}

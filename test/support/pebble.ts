import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { freePort } from "./pg-cluster.js";
import { makeCa, makeLeaf } from "./tls-helpers.js";

// Debian's `pebble` (Let's Encrypt's ACME test server) on loopback for the ACME tests:
// its own HTTPS directory under a test CA (trusted by the vault through NODE_EXTRA_CA_CERTS),
// HTTP-01 validated for real on `httpPort`, where the vault's redirect listener must be.

/** The pebble binary: VAULT_PEBBLE, else /usr/bin/pebble; null when neither exists. */
export function findPebble(): string | null {
  for (const path of [process.env.VAULT_PEBBLE, "/usr/bin/pebble"]) if (path !== undefined && path !== "" && existsSync(path)) return path;
  return null;
}

/**
 * `describe` when pebble is installed; skipped (saying why) otherwise, except
 * in CI (CI=true), where a missing pebble fails the run: .ci/run installs it.
 */
export function describePebble(name: string, fn: () => void): void {
  if (findPebble() !== null || process.env.CI === "true") describe(name, fn);
  else describe.skip(`${name} (skipped: no pebble; apt-get install pebble, or set VAULT_PEBBLE)`, fn);
}

/** A running pebble. */
export interface Pebble {
  /** The ACME directory URL (https, under `caFile`). */
  directory: string;
  /** A PEM file of the CA of pebble's own HTTPS: give it to the vault as NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The port pebble validates HTTP-01 on (the vault's VAULT_HTTP_REDIRECT_PORT). */
  httpPort: number;
  /** PEM of the root that signs the certificates pebble issues (its management /roots/0). */
  issuingRoot: () => Promise<string>;
  /** Pebble's log so far. */
  log: () => string;
  /** Certificates issued so far (its "Issued certificate serial" lines). */
  issued: () => number;
  stop: () => Promise<void>;
}

function getText(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (s: string) => (body += s));
      res.on("end", () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * Starts pebble on free loopback ports and waits until its directory answers.
 * @param options.validitySeconds lifetime of the certificates it issues (its config's certificateValidityPeriod); default pebble's own (5 years).
 * @param options.httpPort where it validates HTTP-01 (default a free port).
 * @throws when the binary is missing or the directory does not answer within 10 s (with its log).
 */
export async function startPebble(options: { validitySeconds?: number; httpPort?: number } = {}): Promise<Pebble> {
  const bin = findPebble();
  if (bin === null) throw new Error("pebble is not installed (apt-get install pebble)");
  const dir = mkdtempSync(join(tmpdir(), "ev-pebble-"));
  const ca = await makeCa("pebble listener test CA");
  const leaf = await makeLeaf(ca);
  writeFileSync(join(dir, "cert.pem"), leaf.cert);
  writeFileSync(join(dir, "key.pem"), leaf.key);
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, ca.cert);
  const [listen, management, tlsPort] = [await freePort(), await freePort(), await freePort()];
  const httpPort = options.httpPort ?? (await freePort());
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${listen}`,
      managementListenAddress: `127.0.0.1:${management}`,
      certificate: join(dir, "cert.pem"),
      privateKey: join(dir, "key.pem"),
      httpPort,
      tlsPort,
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
      ...(options.validitySeconds === undefined ? {} : { certificateValidityPeriod: options.validitySeconds }),
    },
  };
  writeFileSync(join(dir, "pebble.json"), JSON.stringify(config));
  // No random validation sleeps, no rejected nonces: the same steps each run.
  const child: ChildProcess = spawn(bin, ["-config", join(dir, "pebble.json")], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => (log += s));
  child.stderr?.setEncoding("utf8").on("data", (s: string) => (log += s));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // A test that times out never reaches its stop(): pebble goes with the test process.
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  const directory = `https://127.0.0.1:${listen}/dir`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await getText(directory, ca.cert);
      break;
    } catch (err) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill("SIGKILL");
        throw new Error(`pebble did not answer at ${directory} (${(err as Error).message}); its log:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    directory,
    caFile,
    httpPort,
    issuingRoot: () => getText(`https://127.0.0.1:${management}/roots/0`, ca.cert),
    log: () => log,
    issued: () => (log.match(/Issued certificate serial/g) ?? []).length,
    stop: async () => {
      process.off("exit", reap);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}


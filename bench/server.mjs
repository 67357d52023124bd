// The built server as the benchmarks start it (bench/run.mjs, bench/scale.mjs): a child process
// of `node bin/ephemeral-vault.js` on a free port, with a license made by the command itself.
import { execFileSync, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
export const BIN = join(ROOT, "bin", "ephemeral-vault.js");

/** The environment without VAULT_* settings from the caller's shell, plus `extra`. */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("VAULT_") && k !== "PORT") env[k] = v;
  return { ...env, ...extra };
}

/** Runs the command to completion and returns its stdout. */
export function command(args) {
  return execFileSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: "utf8", env: cleanEnv() });
}

/** Makes an issuer key pair in `dir` and a never-expiring license with the command itself. */
export function makeLicense(dir) {
  const keyFile = join(dir, "issuer.pem");
  const keygen = command(["license", "keygen", "--private-key", keyFile]);
  const publicKey = /^VAULT_LICENSE_PUBLIC_KEY=(\S+)$/m.exec(keygen)?.[1];
  if (!publicKey) throw new Error(`license keygen printed no public key:\n${keygen}`);
  const license = command(["license", "issue", "--private-key", keyFile, "--subject", "benchmark"]).trim();
  return { license, publicKey };
}

/**
 * Starts the server on a free port; resolves once it prints its url with
 * `{child, url, output(), startMs}` (startMs: spawn to listening, milliseconds).
 * `nodeArgs` go to node before the script (for example `--cpu-prof`).
 */
export function startServer(dataDir, env, nodeArgs = []) {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, BIN, "--port", "0"], {
    cwd: ROOT,
    env: cleanEnv({ VAULT_DATA_DIR: dataDir, ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${stderr}`)), 60_000);
    child.stderr.setEncoding("utf8").on("data", (s) => {
      stderr += s;
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], output: () => stdout + stderr, startMs: performance.now() - started });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${stderr}`));
    });
  });
}

/** Stops the server with SIGTERM (SIGKILL after 6 s) and resolves once it has exited. */
export function stopServer(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill("SIGKILL"), 6_000);
    child.once("exit", () => {
      clearTimeout(force);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./e2e-helpers.js";

/**
 * Packing and consuming the packages as a user would (docs/client.md
 * "Install"): `npm pack`, an install from the tarball into a project of its
 * own, `node` on ESM and CommonJS files there, and `tsc` on a consumer.
 */

/** The repository's TypeScript compiler, run with node (a consumer project has none installed). */
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");

/** Runs a command; throws with its output when it exits non-zero. */
export function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const res = spawnSync(command, args, { cwd, env, encoding: "utf8", timeout: 120_000 });
  if (res.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${res.status}: ${res.stdout}${res.stderr}`);
  return res.stdout;
}

/**
 * `npm pack --ignore-scripts` of the repository (extra `args` such as
 * `-w packages/client`) into `dest`; dist/ is built by the test setup.
 * @returns the tarball's path and the files it holds.
 */
export function pack(dest: string, args: string[] = []): { tarball: string; files: string[] } {
  const out = run("npm", ["pack", ...args, "--ignore-scripts", "--json", "--pack-destination", dest], ROOT);
  const [entry] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
  if (entry === undefined) throw new Error(`npm pack made nothing: ${out}`);
  return { tarball: join(dest, entry.filename), files: entry.files.map((f) => f.path) };
}

/** Unpacks a tarball into `dir` (created) as npm lays a package out: without the leading `package/`. */
export function unpack(tarball: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  run("tar", ["-xzf", tarball, "-C", dir, "--strip-components=1"], ROOT);
}

/** A project directory with a package.json and the given files. */
export function project(dir: string, files: Record<string, string>): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "consumer", version: "1.0.0", private: true })}\n`);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The names under node_modules/ (scoped ones as `@scope/name`), npm's own dot files left out. */
export function installed(dir: string): string[] {
  const top = join(dir, "node_modules");
  return readdirSync(top)
    .filter((name) => !name.startsWith("."))
    .flatMap((name) => (name.startsWith("@") ? readdirSync(join(top, name)).map((inner) => `${name}/${inner}`) : [name]))
    .sort();
}

/** Runs `node file` in `dir` with VAULT_ADDR and VAULT_TOKEN set; the file prints one JSON line. */
export function nodeJson(dir: string, file: string, vault: { url: string; token: string }): Record<string, unknown> {
  const env = { PATH: process.env.PATH, VAULT_ADDR: vault.url, VAULT_TOKEN: vault.token };
  return JSON.parse(run(process.execPath, [file], dir, env)) as Record<string, unknown>;
}

/**
 * `tsc -p <config> --explainFiles` in `dir`, with a tsconfig.json written
 * there: strict, module NodeNext, the declarations of node_modules checked
 * too (skipLibCheck off) unless `options` says otherwise.
 * @returns the exit status and the output (diagnostics, then which files were loaded and why).
 */
export function typeCheck(dir: string, config: string, files: string[], options: Record<string, unknown> = {}): { status: number | null; output: string } {
  const compilerOptions = { module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ["ES2022", "DOM"], ...options };
  writeFileSync(join(dir, config), JSON.stringify({ compilerOptions, files }));
  const res = spawnSync(process.execPath, [TSC, "-p", config, "--explainFiles"], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  return { status: res.status, output: res.stdout + res.stderr };
}

/** The ESM script of a consumer: a put, a get and a refused get through `specifier`, printed as JSON. */
export function esmScript(specifier: string, key: string): string {
  return `import { describeFailure, VaultApiError, VaultClient } from ${JSON.stringify(specifier)};
const client = new VaultClient();
await client.put(${JSON.stringify(key)}, "value of " + ${JSON.stringify(key)});
const read = await client.get(${JSON.stringify(key)});
const refused = await client.get(${JSON.stringify(`${key}/missing`)}).catch((err) => err);
console.log(JSON.stringify({ value: read.value, api: refused instanceof VaultApiError, status: refused.status, failure: describeFailure(refused), resolved: import.meta.resolve(${JSON.stringify(specifier)}) }));
`;
}

/** The CommonJS twin of esmScript(): the same calls through require(). */
export function cjsScript(specifier: string, key: string): string {
  return `const { describeFailure, VaultApiError, VaultClient } = require(${JSON.stringify(specifier)});
(async () => {
  const client = new VaultClient();
  await client.put(${JSON.stringify(key)}, "value of " + ${JSON.stringify(key)});
  const read = await client.get(${JSON.stringify(key)});
  const refused = await client.get(${JSON.stringify(`${key}/missing`)}).catch((err) => err);
  console.log(JSON.stringify({ value: read.value, api: refused instanceof VaultApiError, status: refused.status, failure: describeFailure(refused), resolved: require.resolve(${JSON.stringify(specifier)}) }));
})();
`;
}

/** A TypeScript consumer of `specifier` (ESM .mts or CommonJS .cts alike): compiles only if the types are real. */
export function typedConsumer(specifier: string): string {
  return `import { VaultApiError, VaultClient } from ${JSON.stringify(specifier)};
import type { SecretRead, VaultClientOptions } from ${JSON.stringify(specifier)};
const options: VaultClientOptions = { addr: "http://127.0.0.1:8484", timeoutMs: 5_000 };
const client = new VaultClient(options);
export const value: Promise<string> = client.get("app/db_url").then((read: SecretRead) => read.value);
export const status = (err: unknown): number | undefined => (err instanceof VaultApiError ? err.status : undefined);
`;
}

/** A consumer that misuses the types (a value read as a number): tsc must refuse it. */
export function misusingConsumer(specifier: string): string {
  return `import { VaultClient } from ${JSON.stringify(specifier)};
export const n: Promise<number> = new VaultClient().get("k").then((read) => read.value);
`;
}

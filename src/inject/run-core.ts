import { VaultApiError } from "@ephemeral-vault/client";
import type { VaultClient } from "@ephemeral-vault/client";
import { prefixPath } from "./env-names.js";
import { planRun } from "./run-plan.js";
import type { RunPlan } from "./run-plan.js";

/**
 * Where a variable's value comes from: a secret `key` in the connection's
 * scope (global, or the `--org` org), or in the org `org` when set
 * (`vault://org/ORG_ID/KEY` in an env file: docs/cli.md, "run").
 */
export interface SecretRef {
  key: string;
  org?: string | undefined;
}

/** What `run`, `export` and the MCP tool `run_command` inject: names from secrets, and plain names from an env file. */
export interface Injection {
  /** Variable name -> the secret it is read from. */
  secrets: Map<string, SecretRef>;
  /** Variable name -> a plain value from an env file (not a secret: never masked). */
  plain: Map<string, string>;
  /** The plan of `--env`/`--prefix` (its skipped keys, for the stderr report). */
  plan: RunPlan;
}

/** What to inject: `--env` mappings, a `--prefix`, and an env file's entries (cli/client/env-file.ts). */
export interface InjectionRequest {
  mappings: ReadonlyArray<{ name: string; key: string }>;
  prefix?: string | undefined;
  /** Names from an env file: a secret reference or a plain value. */
  file?: ReadonlyMap<string, SecretRef | string> | undefined;
  /** `--only NAMES`: the only variables `--prefix` may set (run-plan.ts planRun). */
  only?: ReadonlySet<string> | undefined;
  /** When true, a name in `only` that no key under the prefix sets is no error (MCP's `--allow-env` lists more names than one prefix holds). */
  missingOnlyIsFine?: boolean | undefined;
}

/**
 * The keys of every keyed secret under `path` (`P/`, from prefixPath), all
 * pages; whole path segments, so `prod/` never yields `prod2/x`.
 * @throws VaultApiError as list() (403 without the list permission).
 */
export async function keysUnder(client: VaultClient, path: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.list({ prefix: path, ...(cursor === undefined ? {} : { cursor }) });
    for (const entry of page.secrets) {
      if ("key" in entry && typeof entry.key === "string" && entry.key.startsWith(path)) keys.push(entry.key);
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return keys;
}

/**
 * Plans an injection (docs/cli.md, "run"): lists the keys under the prefix,
 * applies run-plan.ts planRun (only the names `--only` lists, no override, whole path segments),
 * then adds an env file's names, which are explicit (any name) and win over
 * `--prefix` names; an `--env` mapping wins over both. Nothing is read here.
 * @param onEmptyPrefix called when the prefix holds no secret but `--env`
 *   or the file names something (the caller prints it); without them it is an error.
 * @throws VaultApiError 404 when nothing is under the prefix and nothing else is named,
 *   or when a name `--only` lists has no key under the prefix (nothing read);
 *   ConfigError (exit 2) as planRun.
 */
export async function planInjection(
  client: VaultClient,
  request: InjectionRequest,
  env: NodeJS.ProcessEnv,
  onEmptyPrefix: (path: string) => void = () => {},
): Promise<Injection> {
  const path = request.prefix === undefined ? undefined : prefixPath(request.prefix);
  const prefixKeys = path === undefined ? [] : await keysUnder(client, path);
  if (path !== undefined && prefixKeys.length === 0) {
    if (request.mappings.length === 0 && (request.file?.size ?? 0) === 0) {
      throw new VaultApiError(404, `no secret under ${path}`, undefined, `GET /secrets?prefix=${path}`);
    }
    onEmptyPrefix(path);
  }
  const plan = planRun(prefixKeys, request.prefix, request.mappings, env, request.only, (request.file?.size ?? 0) > 0);
  const fileNames = request.file ?? new Map<string, SecretRef | string>();
  const unset = plan.missing.filter((name) => !fileNames.has(name));
  if (path !== undefined && unset.length > 0 && request.missingOnlyIsFine !== true) {
    throw new VaultApiError(404, `no secret under ${path} for ${unset.join(", ")} (--only)`, undefined, `GET /secrets?prefix=${path}`);
  }
  const secrets = new Map<string, SecretRef>();
  const plain = new Map<string, string>();
  const explicit = new Set(request.mappings.map((m) => m.name));
  for (const [name, source] of request.file ?? []) {
    if (explicit.has(name)) continue;
    plan.names.delete(name);
    if (typeof source === "string") plain.set(name, source);
    else secrets.set(name, source);
  }
  for (const [name, key] of plan.names) secrets.set(name, { key });
  return { secrets, plain, plan };
}

/**
 * Reads the planned secrets: first checks that every one exists (HEAD:
 * nothing read, nothing counted), then reads each distinct secret once (the
 * read counts and may burn it), so a missing secret burns nothing.
 * @param clientOf the client for a reference's scope (its org, or the connection's).
 * @returns name -> value.
 * @throws VaultApiError naming the key that is missing (404) or refused.
 */
export async function readSecrets(clientOf: (ref: SecretRef) => VaultClient, refs: ReadonlyMap<string, SecretRef>): Promise<Map<string, string>> {
  const distinct = new Map<string, SecretRef>();
  for (const ref of refs.values()) distinct.set(refId(ref), ref);
  for (const ref of distinct.values()) {
    const found = await namingKey(ref, () => clientOf(ref).exists(ref.key));
    if (!found) throw new VaultApiError(404, `${refName(ref)}: secret not found`, undefined, `HEAD ${ref.key}`);
  }
  const byRef = new Map<string, string>();
  for (const [id, ref] of distinct) byRef.set(id, (await namingKey(ref, () => clientOf(ref).get(ref.key))).value);
  const values = new Map<string, string>();
  for (const [name, ref] of refs) values.set(name, byRef.get(refId(ref)) ?? "");
  return values;
}

/**
 * A client per scope: `client` for references without an org, and one
 * client per org id (same address and token) for `vault://org/ORG_ID/KEY`.
 */
export function scopedClients(client: VaultClient, make: (org: string) => VaultClient): (ref: SecretRef) => VaultClient {
  const byOrg = new Map<string, VaultClient>();
  return (ref) => {
    if (ref.org === undefined) return client;
    let found = byOrg.get(ref.org);
    if (found === undefined) {
      found = make(ref.org);
      byOrg.set(ref.org, found);
    }
    return found;
  };
}

function refId(ref: SecretRef): string {
  return `${ref.org ?? ""}\u0000${ref.key}`;
}

function refName(ref: SecretRef): string {
  return ref.org === undefined ? ref.key : `org/${ref.org}/${ref.key}`;
}

/** Runs `call`, prefixing the key to the message of an API refusal. */
async function namingKey<T>(ref: SecretRef, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof VaultApiError) {
      throw new VaultApiError(err.status, `${refName(ref)}: ${err.error}`, err.message === err.error ? undefined : err.message, err.request);
    }
    throw err;
  }
}

import { ValueCipher, generateRootKey } from "../src/crypto.js";
import { openDatabase } from "../src/db.js";
import type { Db } from "../src/db.js";
import { createLogger } from "../src/log.js";
import { createVault } from "../src/vault.js";
import type { Vault, VaultOptions } from "../src/vault.js";

export const MASTER_KEY = "test-master-key-0123456789";

/** A clock the test moves by hand; times in Unix milliseconds. */
export interface FakeClock {
  now: () => number;
  /** Moves time forward by `ms` milliseconds. */
  advance: (ms: number) => void;
  set: (ms: number) => void;
}

/** A fake clock starting at 2026-01-01T00:00:00Z. */
export function fakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

export interface TestVault extends Vault {
  db: Db;
  clock: FakeClock;
  cipher: ValueCipher;
  /** Sends a request to the in-process app. `body` objects are sent as JSON. */
  request: (method: string, path: string, options?: RequestOptions) => Promise<Response>;
  /** Same with the master key. */
  asMaster: (method: string, path: string, body?: unknown) => Promise<Response>;
}

export interface RequestOptions {
  /** Bearer token; null sends no Authorization header. Default: the master key. */
  token?: string | null;
  body?: unknown;
  /** Raw body, sent as is (with `contentType`). */
  raw?: BodyInit;
  contentType?: string;
  headers?: Record<string, string>;
}

/**
 * A fresh vault on `:memory:` with a fake clock and a silent logger: one per
 * test. `options` override any VaultOptions (for example `activeLimit`).
 */
export function buildTestVault(options: Partial<VaultOptions> = {}): TestVault {
  const db = openDatabase(":memory:");
  const clock = fakeClock();
  const cipher = new ValueCipher(generateRootKey());
  const vault = createVault({
    db,
    cipher,
    log: createLogger("silent"),
    masterKey: MASTER_KEY,
    now: clock.now,
    activeLimit: () => null,
    publicUrl: "http://vault.test",
    maxValueBytes: 65_536,
    trustProxy: false,
    ...options,
  });
  const request = (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? MASTER_KEY : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: BodyInit | undefined;
    if (opts.raw !== undefined) {
      body = opts.raw;
      if (opts.contentType) headers["content-type"] = opts.contentType;
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = opts.contentType ?? "application/json";
    }
    return Promise.resolve(vault.app.request(path, { method, headers, body }));
  };
  return {
    ...vault,
    db,
    clock,
    cipher,
    request,
    asMaster: (method, path, body) => request(method, path, { body }),
  };
}

/** A scoped API key made through POST /keys: its id and its token (shown once). */
export interface CreatedKey {
  id: string;
  token: string;
}

/**
 * Creates a scoped API key through `POST /keys` (with the master key, or
 * with `asToken`) and returns its id and token; fails the test on any
 * status other than 201.
 * @param body `{name?, permissions, prefix?, expires_at?}`; name defaults to "test key".
 */
export async function createKey(
  v: TestVault,
  body: { name?: string; permissions: string[]; prefix?: string | null; expires_at?: number | null },
  asToken?: string,
): Promise<CreatedKey> {
  const res = await v.request("POST", "/keys", { token: asToken, body: { name: "test key", ...body } });
  if (res.status !== 201) throw new Error(`POST /keys answered ${res.status}: ${await res.text()}`);
  const created = (await res.json()) as CreatedKey;
  return { id: created.id, token: created.token };
}

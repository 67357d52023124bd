/**
 * Shared by the SecretLifecycle test files (lifecycle*.test.ts): their
 * constants, the recording lifecycle, and the helpers that read rows and
 * refusals on either engine.
 */
import { expect } from "vitest";
import { ValueCipher, generateRootKey } from "../../src/crypto/cipher.js";
import { VaultError } from "../../src/model/errors.js";
import type { EventSink, Origin, SecretEvent } from "../../src/domain/events.js";
import { SecretLifecycle } from "../../src/domain/secrets/lifecycle.js";
import { afterRefusal } from "../../src/http/routes/secrets/secret-route.js";
import type { Awaitable, UnitOfWork, Work } from "../../src/store/work.js";
import { buildTestWork, fakeClock } from "./helpers.js";
import type { FakeClock, TestVault } from "./helpers.js";

export const ORIGIN: Origin = { actor: "master", principalId: null, ip: "127.0.0.1" };
export const READER = { principalKeyId: null };
/** An org scope: the lifecycle is the same, only the scope column differs. */
export const ORG = "org_lifecycletest";

/** Runs a lifecycle call in the group commit, as the routes do. */
export function inTx<T>(tx: UnitOfWork<Work>, fn: (w: Work) => Awaitable<T>): Promise<T> {
  return tx.run(fn);
}

export interface Recorded {
  events: SecretEvent[];
  pruned: { scope: string; count: number }[];
}

/**
 * A lifecycle of our own, with an EventSink that records what it is given, over
 * the engine under test (buildTestWork: SQLite's group commit, or PostgreSQL in pg-matrix).
 */
export function recordingLifecycle(options: { activeLimit?: number | null; failEvent?: (event: SecretEvent) => boolean } = {}): {
  secrets: SecretLifecycle;
  tx: UnitOfWork<Work>;
  query: TestVault["query"];
  clock: FakeClock;
  recorded: Recorded;
} {
  const clock = fakeClock();
  const recorded: Recorded = { events: [], pruned: [] };
  const events: EventSink = {
    secretEvent: (_w, event) => {
      recorded.events.push(structuredClone(event));
      // A sink that fails after the unit awaited something: the unit's own statements already ran.
      if (options.failEvent?.(event)) return Promise.reject(new Error(`sink refused ${event.type} ${event.key}`));
    },
    secretsPruned: (_w, scope, count) => {
      recorded.pruned.push({ scope, count });
    },
    requestEvent: () => {},
  };
  const limit = options.activeLimit ?? null;
  const cipher = new ValueCipher(generateRootKey());
  const secrets = new SecretLifecycle({
    cipher,
    events,
    now: clock.now,
    activeLimit: () => limit,
  });
  const { tx, query } = buildTestWork(cipher);
  return { secrets, tx, query, clock, recorded };
}

/** The stored row of a secret (the tests use it where the key has one row), read on either engine. */
export async function rawRow(db: { query: TestVault["query"] }, scope: string, key: string) {
  return (await db.query("SELECT * FROM secrets WHERE scope = ? AND key = ?", scope, key))[0] as
    | { state: string; ciphertext: Buffer | null; read_count: number; max_reads: number | null; expires_at: number | null }
    | undefined;
}

/** A count on either engine: `SELECT count(*) AS n ...` -> n. */
export async function countOf(v: { query: TestVault["query"] }, sql: string): Promise<number> {
  return (await v.query(sql))[0]?.n as number;
}

/**
 * A lifecycle call as the routes make it: "ok", or the kind of its refusal
 * (VaultError), after afterRefusal (a secret refused past its TTL is
 * expired in a unit of its own, http/routes/secrets/secret-route.ts).
 */
export async function outcomeOf<T>(v: { tx: UnitOfWork<Work>; secrets: SecretLifecycle }, fn: (w: Work) => Awaitable<T>): Promise<string> {
  try {
    await v.tx.run(fn);
    return "ok";
  } catch (err) {
    await afterRefusal(v, err, ORIGIN);
    if (!(err instanceof VaultError)) throw err;
    return err.kind;
  }
}

export async function expectVaultError(p: Promise<unknown>, kind: string): Promise<VaultError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  expect((err as VaultError).kind).toBe(kind);
  return err as VaultError;
}

import type { SecretMeta } from "../../domain/secret-model.js";
import { seconds } from "./input.js";

/** A secret's name in a response: `{key}`, or `{id}` for a public secret. */
export type SecretName = { key: string } | { id: string };

/**
 * `fields` under the name a secret goes by in responses, the name first:
 * `{key, ...fields}`, or `{id, ...fields}` for a public secret.
 *
 * Not written as an object literal that starts with a spread and adds
 * properties after it (`{ ...nameOf(s), value }`): on Node.js 20 (V8 11.3)
 * such an object gets a map of its own with no transition back, so every
 * property added after the spread makes a new map, for every object built.
 * Measured on the GET body: 6.8 against 0.7 us per body in isolation, and in
 * the server about 350 KB per scavenge kept alive into the old generation,
 * which lengthened every scavenge pause and so the p99
 * (docs/performance-log.md, round seven). Object.assign onto a fresh literal
 * follows the cached map transitions: every body of one kind shares a map
 * (test/object-shapes.test.ts).
 * @param s the secret (only `key` and `isPublic` are read).
 * @param fields the properties after the name, in answer order.
 */
export function named<T extends object>(s: SecretMeta, fields: T): SecretName & T {
  return Object.assign(s.isPublic ? { id: s.key } : { key: s.key }, fields);
}

/**
 * The metadata both scopes show, times in Unix seconds; never the value
 * (docs/contract.md §6: create, list and PATCH answers).
 */
export function metaJson(s: SecretMeta) {
  return named(s, {
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  });
}

/**
 * The answer of a read (docs/contract.md §6, GET /secrets/:key): the name,
 * the decrypted value and the metadata, `read_count` after this read.
 */
export function readJson(s: SecretMeta, value: string) {
  return named(s, {
    value,
    created_at: seconds(s.createdAt),
    expires_at: seconds(s.expiresAt),
    max_reads: s.maxReads,
    read_count: s.readCount,
  });
}

/** An org secret's list entry: the metadata, its owner, state and burn rule (docs/contract.md §6). */
export function orgListEntry(s: SecretMeta) {
  return Object.assign(metaJson(s), { owner_id: s.ownerId, state: s.state, delete: s.burnOnLimit });
}

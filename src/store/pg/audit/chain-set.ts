import { chainSetMac, headMac, macEquals } from "../../../model/audit/head.js";
import { ADVISORY_XACT_LOCK } from "../batch/index.js";
import type { Queryable } from "../batch/index.js";
import { metaSelect, metaUpsert } from "../../sql/meta.js";
import { PgExecutor } from "../executor.js";
import { paramsOf, render } from "../../sql/template.js";

/**
 * The authenticated set of audit chains of a PostgreSQL log (meta
 * `audit_chain_set`, docs/audit.md): `{chains: [name, ...], mac}`, the mac
 * chainSetMac() under the chain key. Each chain's head carries its own MAC
 * (audit_chains.mac, over its name, seq and hash), so the heads cover each
 * chain's rows and count, and the set covers which chains there are: a
 * chain removed whole shows in `audit verify`.
 *
 * The set changes only when a writer starts a chain (a pooled client's first
 * audited row), never per row: the hot path is untouched.
 */
export const CHAIN_SET_META = "audit_chain_set";

/** The advisory lock that orders writers recording a new chain (one at a time, only at a chain's start). */
const CHAIN_SET_LOCK = 0x6576_6163; // "evac"

/** A parsed set record, or undefined when it is not one. */
export function parseChainSet(value: string): { chains: string[]; mac: string } | undefined {
  try {
    const parsed = JSON.parse(value) as { chains?: unknown; mac?: unknown };
    if (!Array.isArray(parsed.chains) || !parsed.chains.every((c) => typeof c === "string") || typeof parsed.mac !== "string") return undefined;
    return { chains: parsed.chains as string[], mac: parsed.mac };
  } catch {
    return undefined;
  }
}

/**
 * Records a chain just started by this writer in the set, inside the unit
 * of work that starts it (rolled back with it). The new set is the recorded
 * one (authenticated under one of `keys`) plus every chain in audit_chains,
 * signed under `key`: a chain removed from audit_chains stays in the set.
 *
 * When there is no set record yet (a new database, one copied from SQLite by
 * `migrate`, or one written before heads were signed) and no other chain has
 * a signed head, the heads not yet signed are signed as they stand and the
 * set is recorded. When the record is missing although signed heads exist,
 * or does not authenticate, nothing is written: `audit verify` reports it.
 * @param key the current chain key; `keys` every loaded chain key (a record
 *   written before a rotation authenticates under an older one).
 */
export async function recordNewChain(db: Queryable, chain: string, key: Buffer, keys: readonly Buffer[]): Promise<void> {
  await db.query(ADVISORY_XACT_LOCK.with([CHAIN_SET_LOCK]));
  const stored = await new PgExecutor(db).get<{ value: string }>(metaSelect(CHAIN_SET_META));
  const heads = (await db.query<{ chain: string; seq: string | number; hash: string; mac: string | null }>("SELECT chain, seq, hash, mac FROM audit_chains")).rows;
  const names = new Set(heads.map((h) => h.chain));
  if (stored === undefined) {
    if (heads.some((h) => h.chain !== chain && h.mac !== null)) return;
    for (const h of heads) {
      if (h.chain === chain || h.mac !== null) continue;
      // Only the head as read: one an older build's writer moved meanwhile stays unsigned, for `audit verify`.
      await db.query("UPDATE audit_chains SET mac = $1 WHERE chain = $2 AND mac IS NULL AND seq = $3 AND hash = $4", [
        headMac(key, h.chain, Number(h.seq), h.hash),
        h.chain,
        h.seq,
        h.hash,
      ]);
    }
  } else {
    const record = parseChainSet(stored.value);
    if (record === undefined || !keys.some((k) => macEquals(chainSetMac(k, record.chains), record.mac))) return;
    for (const name of record.chains) names.add(name);
  }
  const chains = [...names].sort();
  const upsert = metaUpsert(CHAIN_SET_META, JSON.stringify({ chains, mac: chainSetMac(key, chains) }));
  const rendered = render(upsert, "pg");
  await db.query(rendered.text, paramsOf(upsert, rendered));
}

/*
 * The PostgreSQL parts of `audit verify` and `audit head` (docs/audit.md):
 * the chains' heads, a row's hash, the walk of every chain. The anchor
 * line's rules are domain/audit/anchor.ts's.
 */
import { openPgPool } from "../pool.js";
import { verifyPgAuditChains } from "../audit/verify.js";
import type { PgAuditLog } from "../../tool-shapes.js";

/**
 * The audit log of the PostgreSQL database at `url`, on one connection.
 * @throws the driver's error when the database cannot be reached.
 */
export async function openPgAuditLog(url: string): Promise<PgAuditLog> {
  const pool = await openPgPool({ url, poolSize: 1 });
  return {
    heads: async () =>
      (await pool.query<{ chain: string; seq: number; hash: string }>("SELECT chain, seq, hash FROM audit_chains WHERE seq > 0 ORDER BY chain")).rows,
    hashAt: async (chain, seq) => (await pool.query<{ hash: string }>("SELECT hash FROM audit WHERE chain = $1 AND seq = $2", [chain, seq])).rows[0]?.hash,
    verify: (keys) => verifyPgAuditChains(pool, keys),
    end: () => pool.end(),
  };
}

import { randomFillSync } from "node:crypto";

/** Bytes drawn from the CSPRNG at once. */
const POOL_BYTES = 4096;

let pool = Buffer.allocUnsafe(0);
let offset = 0;

/**
 * `n` bytes from the operating system's CSPRNG (crypto.randomFillSync), like
 * crypto.randomBytes(n) but drawn from a 4 KiB pool refilled as it runs out,
 * so the many small draws of the hot path (a 16-byte salt and a 12-byte
 * nonce per write, a 32-byte public id) cost one system call per hundred
 * or so instead of one each. Every byte is handed out once: a refill
 * allocates a new pool, so a returned view is never overwritten.
 * @param n bytes wanted, 1 to 4096.
 * @returns a Buffer of exactly n fresh random bytes (a view into the pool).
 */
export function randomBytesPooled(n: number): Buffer {
  if (n > POOL_BYTES) return randomFillSync(Buffer.allocUnsafe(n));
  if (offset + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    offset = 0;
  }
  const out = pool.subarray(offset, offset + n);
  offset += n;
  return out;
}

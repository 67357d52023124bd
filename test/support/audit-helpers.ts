import { expect } from "vitest";
import type { TestVault } from "./helpers.js";

/** One entry of GET /audit (docs/audit.md): `timestamp` in Unix seconds. */
export interface Entry {
  id: string;
  timestamp: number;
  action: string;
  key: string | null;
  actor: string | null;
  ip: string | null;
}

/**
 * The entries of GET /audit`query` (newest first), read with `token`
 * (default the master key); fails the test on any status but 200.
 */
export async function entries(v: TestVault, query = "", token?: string): Promise<Entry[]> {
  const res = await v.request("GET", `/audit${query}`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: Entry[] }).entries;
}

/** The actions of GET /audit`query`, oldest first, for readability. */
export async function actions(v: TestVault, query = ""): Promise<string[]> {
  return (await entries(v, query)).map((e) => e.action).reverse();
}

import { expect } from "vitest";
import type { TestVault } from "./helpers.js";

/** The test vault's start, Unix seconds (fakeClock's 2026-01-01T00:00:00Z). */
export const T0 = Date.UTC(2026, 0, 1) / 1000;

/** POST /secrets with the master key and `body` as JSON. */
export async function create(v: TestVault, body: Record<string, unknown>): Promise<Response> {
  return v.asMaster("POST", "/secrets", body);
}

/** The JSON object of `res`; fails the test unless its content-type is application/json. */
export async function json(res: Response): Promise<Record<string, unknown>> {
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return (await res.json()) as Record<string, unknown>;
}

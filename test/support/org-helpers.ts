import { expect } from "vitest";
import type { TestVault } from "./helpers.js";

/** A principal with one key, made through the API with the master key. */
export interface TestPrincipal {
  id: string;
  /** The principal key id (pk_...). */
  keyId: string;
  /** The vpk_ bearer token. */
  token: string;
}

/** Sends a request and asserts its status; returns the parsed JSON body (or null). */
export async function expectStatus(res: Response | Promise<Response>, status: number): Promise<Record<string, unknown>> {
  const r = await res;
  const text = await r.text();
  expect(r.status, `body: ${text}`).toBe(status);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Creates an org with the master key and returns its id. */
export async function createOrg(v: TestVault, name = "acme"): Promise<string> {
  const body = await expectStatus(v.asMaster("POST", "/orgs", { name }), 201);
  return body.id as string;
}

/** Makes a key for a principal with the master key; times in Unix seconds. */
export async function createPrincipalKey(
  v: TestVault,
  orgId: string,
  principalId: string,
  options: { name?: string; valid_after?: number; valid_before?: number } = {},
): Promise<{ keyId: string; token: string }> {
  const body = await expectStatus(
    v.asMaster("POST", `/orgs/${orgId}/principals/${principalId}/keys`, { name: "laptop", ...options }),
    201,
  );
  return { keyId: body.id as string, token: body.key as string };
}

/** Creates a principal with the given role and gives it one key. */
export async function createPrincipal(v: TestVault, orgId: string, role: string, name = role): Promise<TestPrincipal> {
  const body = await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals`, { name, role }), 201);
  const id = body.id as string;
  const key = await createPrincipalKey(v, orgId, id);
  return { id, ...key };
}

/** Creates a custom role in an org. */
export async function createRole(v: TestVault, orgId: string, name: string, permissions: string): Promise<void> {
  await expectStatus(v.asMaster("POST", `/orgs/${orgId}/roles`, { name, permissions }), 201);
}

/** The current time of the test vault's clock, Unix seconds. */
export function nowSeconds(v: TestVault): number {
  return Math.floor(v.clock.now() / 1000);
}

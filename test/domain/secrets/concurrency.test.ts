import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import { cleanupTemp, killChildren, startVault, tempDir } from "../../support/e2e-helpers.js";
import type { VaultProcess } from "../../support/e2e-helpers.js";

/**
 * Exactly one of any number of concurrent readers gets the last read
 * (docs/contract.md §6), in process and over real sockets.
 */

type Send = (method: string, path: string, body?: unknown) => Promise<Response>;

function countStatuses(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

async function parallel(n: number, send: () => Promise<Response>): Promise<{ status: number; body: Record<string, unknown> }[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await send();
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }),
  );
}

/** The shared cases, run against any way of sending a request. */
function concurrencyCases(send: () => Send) {
  it("50 parallel reads of a max_reads:1 secret: exactly one 200, the rest 404", async () => {
    const s = send();
    expect((await s("POST", "/secrets", { key: "once", value: "only-one-reader", max_reads: 1 })).status).toBe(201);
    const results = await parallel(50, () => s("GET", "/secrets/once"));
    expect(countStatuses(results.map((r) => r.status))).toEqual({ 200: 1, 404: 49 });
    const winner = results.find((r) => r.status === 200);
    expect(winner?.body).toMatchObject({ key: "once", value: "only-one-reader", read_count: 1, max_reads: 1 });
    expect((await s("GET", "/secrets/once")).status).toBe(404);
  });

  it("100 parallel reads of a max_reads:10 secret: exactly ten 200s with read counts 1..10", async () => {
    const s = send();
    expect((await s("POST", "/secrets", { key: "ten", value: "v", max_reads: 10 })).status).toBe(201);
    const results = await parallel(100, () => s("GET", "/secrets/ten"));
    expect(countStatuses(results.map((r) => r.status))).toEqual({ 200: 10, 404: 90 });
    const counts = results.filter((r) => r.status === 200).map((r) => r.body.read_count as number);
    expect(counts.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await s("GET", "/secrets/ten")).status).toBe(404);
  });

  it("50 parallel reads of a public max_reads:1 secret: exactly one 200", async () => {
    const s = send();
    const { id } = (await (await s("POST", "/secrets", { value: "drop", max_reads: 1 })).json()) as { id: string };
    const results = await parallel(50, () => s("GET", `/secrets/${id}`));
    expect(countStatuses(results.map((r) => r.status))).toEqual({ 200: 1, 404: 49 });
  });

  it("parallel creates of the same key: exactly one 201, the rest 409, and the winner's value is stored", async () => {
    const s = send();
    const results = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const res = await s("POST", "/secrets", { key: "race", value: `value-${i}` });
        await res.arrayBuffer();
        return { i, status: res.status };
      }),
    );
    expect(countStatuses(results.map((r) => r.status))).toEqual({ 201: 1, 409: 29 });
    const winner = results.find((r) => r.status === 201);
    const read = (await (await s("GET", "/secrets/race")).json()) as { value: string };
    expect(read.value).toBe(`value-${winner?.i}`);
  });

  it("parallel reads and a delete: the reads before the delete succeed, none after", async () => {
    const s = send();
    expect((await s("POST", "/secrets", { key: "del", value: "v" })).status).toBe(201);
    const reads = Array.from({ length: 20 }, () => s("GET", "/secrets/del"));
    const del = s("DELETE", "/secrets/del");
    const more = Array.from({ length: 20 }, () => s("GET", "/secrets/del"));
    const [delRes, ...rest] = await Promise.all([del, ...reads, ...more]);
    expect(delRes?.status).toBe(200);
    for (const r of rest) expect([200, 404]).toContain(r.status);
    expect((await s("GET", "/secrets/del")).status).toBe(404);
    expect((await s("GET", "/secrets")).status).toBe(200);
  });
}

describe("concurrency, in process (Promise.all of app requests)", () => {
  let send: Send = () => Promise.reject(new Error("no vault"));
  concurrencyCases(() => {
    const v = buildTestVault();
    send = (method, path, body) => v.request(method, path, { body });
    return send;
  });

  it("parallel creates at the active-secret limit: exactly `limit` 201s, the rest 402", async () => {
    const v = buildTestVault({ activeLimit: () => 10 });
    const results = await parallel(30, () => v.asMaster("POST", "/secrets", { value: "v" }));
    expect(countStatuses(results.map((r) => r.status))).toEqual({ 201: 10, 402: 20 });
  });
});

describe("concurrency, against a real server", () => {
  let vault: VaultProcess;

  beforeAll(async () => {
    vault = await startVault(tempDir());
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });
  afterEach(async () => {
    // the server is shared by this block's cases; it must still be healthy after each
    const health = await fetch(`${vault.url}/health`);
    expect(health.status).toBe(200);
  });

  concurrencyCases(() => (method, path, body) => vault.request(method, path, body));
});

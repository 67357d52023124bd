import { describe, expect, it } from "vitest";
import { createLogger } from "../../../src/log/log.js";
import { startSweeper } from "../../../src/runtime/sweeper.js";
import { buildTestVault, TEST_ENGINE } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { expectStatus } from "../../support/org-helpers.js";

// Receipts on the engine under test (docs/share.md, "Receipts"): made with
// every public secret, they follow its reads and its end, destroy it, and
// never read it.

async function share(v: TestVault, body: Record<string, unknown> = {}): Promise<{ id: string; receipt: string }> {
  const made = await expectStatus(v.asMaster("POST", "/secrets", { value: "the wifi password", ...body }), 201);
  return { id: made.id as string, receipt: made.receipt as string };
}

const receipt = (v: TestVault, token: string) => v.request("GET", `/receipts/${token}`, { token: null });
const reveal = (v: TestVault, id: string) => v.request("POST", `/s/${id}/reveal`, { token: null });
const sweep = async (v: TestVault) => {
  const sweeper = startSweeper({ secrets: v.secrets, requests: v.requests, receipts: v.receipts, tx: v.tx, log: createLogger("silent"), intervalMs: 0 });
  await sweeper.sweepNow();
  await sweeper.stop();
};

describe("receipts", () => {
  it("comes with every public secret, not with a keyed one, and is not a link key or an id", async () => {
    const v = buildTestVault();
    const made = await share(v, { ttl_seconds: 3600, max_reads: 2 });
    expect(made.receipt).toMatch(/^vrc_[A-Za-z0-9_-]{54}$/);
    expect(made.receipt).not.toContain(made.id);
    const keyed = await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v" }), 201);
    expect(keyed).toEqual({ key: "k" });
    const now = Math.floor(v.clock.now() / 1000);
    expect(await expectStatus(receipt(v, made.receipt), 200)).toEqual({
      state: "waiting",
      created_at: now,
      expires_at: now + 3600,
      max_reads: 2,
      read_count: 0,
      last_read_at: null,
    });
    // The receipt reads nothing: it is not an id of the share page.
    expect((await v.request("POST", `/s/${made.receipt}/reveal`, { token: null })).status).toBe(404);
    expect((await expectStatus(receipt(v, made.receipt), 200)).read_count).toBe(0);
  });

  it("sees waiting, then opened (when, reads left), then burned, and keeps that for the secret's TTL after", async () => {
    const v = buildTestVault();
    const made = await share(v, { ttl_seconds: 3600, max_reads: 2 });
    v.clock.advance(60_000);
    expect((await reveal(v, made.id)).status).toBe(200);
    const opened = await expectStatus(receipt(v, made.receipt), 200);
    expect(opened).toMatchObject({ state: "opened", read_count: 1, last_read_at: Math.floor(v.clock.now() / 1000) });
    v.clock.advance(60_000);
    expect((await reveal(v, made.id)).status).toBe(200);
    const burnedAt = Math.floor(v.clock.now() / 1000);
    expect(await expectStatus(receipt(v, made.receipt), 200)).toMatchObject({ state: "burned", read_count: 2, last_read_at: burnedAt });
    // Kept for the TTL the secret had (an hour), from the burn: then the sweeper deletes it.
    v.clock.advance(3599_000);
    await sweep(v);
    expect((await expectStatus(receipt(v, made.receipt), 200)).state).toBe("burned");
    v.clock.advance(1000);
    await sweep(v);
    expect((await receipt(v, made.receipt)).status).toBe(404);
  });

  it("destroys the secret now: the link then reads nothing, the receipt says deleted, a second destroy is 409", async () => {
    const v = buildTestVault();
    const made = await share(v, { max_reads: 3 });
    const destroyed = await expectStatus(v.request("POST", `/receipts/${made.receipt}/destroy`, { token: null }), 200);
    expect(destroyed.state).toBe("deleted");
    expect((await reveal(v, made.id)).status).toBe(404);
    expect((await expectStatus(receipt(v, made.receipt), 200)).state).toBe("deleted");
    expect((await v.request("POST", `/receipts/${made.receipt}/destroy`, { token: null })).status).toBe(409);
    const audit = await expectStatus(v.asMaster("GET", `/audit?action=secret.deleted`), 200);
    expect(audit.entries).toEqual([expect.objectContaining({ key: made.id, actor: "receipt" })]);
  });

  it("says expired once the TTL passed, swept or not; a secret without a TTL keeps its receipt 7 days after its end", async () => {
    const v = buildTestVault();
    const made = await share(v, { ttl_seconds: 60 });
    const forever = await share(v, { max_reads: 1 });
    v.clock.advance(60_000);
    expect((await expectStatus(receipt(v, made.receipt), 200)).state).toBe("expired");
    expect((await v.request("POST", `/receipts/${made.receipt}/destroy`, { token: null })).status).toBe(409);
    await sweep(v);
    expect((await expectStatus(receipt(v, made.receipt), 200)).state).toBe("expired");
    expect((await reveal(v, forever.id)).status).toBe(200);
    v.clock.advance(7 * 86_400_000 - 1000);
    await sweep(v);
    expect((await expectStatus(receipt(v, forever.receipt), 200)).state).toBe("burned");
    v.clock.advance(1000);
    await sweep(v);
    expect((await receipt(v, forever.receipt)).status).toBe(404);
  });

  it("answers 404 to a receipt that was never issued, of any shape, and keeps no token", async () => {
    const v = buildTestVault();
    const made = await share(v);
    for (const token of [`vrc_${"A".repeat(54)}`, "nope", made.id]) expect((await receipt(v, token)).status).toBe(404);
    expect((await v.request("POST", `/receipts/vrc_${"A".repeat(54)}/destroy`, { token: null })).status).toBe(404);
    const rows = JSON.stringify(await v.query("SELECT * FROM receipts"));
    expect(rows).not.toContain(made.receipt);
    expect(rows).not.toContain(made.receipt.slice(4));
  });

  it("keeps each receipt to its own secret when a row id comes back (SQLite gives a deleted last row's id again)", async () => {
    const v = buildTestVault();
    const first = await share(v, { max_reads: 1 });
    expect((await reveal(v, first.id)).status).toBe(200);
    const second = await share(v, { max_reads: 1 });
    // On SQLite the second secret got the first's row id again; whatever the engine, each receipt says its own secret's state.
    if (TEST_ENGINE === "sqlite") {
      const ids = await v.query("SELECT secret_id FROM receipts ORDER BY created_at");
      expect(new Set(ids.map((r) => r.secret_id)).size).toBe(1);
    }
    expect((await expectStatus(receipt(v, first.receipt), 200)).state).toBe("burned");
    expect((await expectStatus(receipt(v, second.receipt), 200)).state).toBe("waiting");
    // Another token's first bytes with other random bytes open nothing.
    const forged = `vrc_${Buffer.concat([Buffer.from(second.receipt.slice(4), "base64url").subarray(0, 8), Buffer.alloc(32, 7)]).toString("base64url")}`;
    expect((await receipt(v, forged)).status).toBe(404);
    expect((await v.request("POST", `/receipts/${forged}/destroy`, { token: null })).status).toBe(404);
    expect((await reveal(v, second.id)).status).toBe(200);
  });

  it("tells its holder nothing of the row id: consecutive receipts share no first bytes", async () => {
    const v = buildTestVault();
    const heads = new Set<string>();
    for (let i = 0; i < 5; i++) heads.add((await share(v)).receipt.slice(4, 14));
    expect(heads.size).toBe(5);
  });

  it("comes with an anonymous link too", async () => {
    const v = buildTestVault({ share: { page: true, anonymous: true, anonymousPerMinute: 10 } });
    const made = await expectStatus(v.request("POST", "/s", { token: null, body: { value: "x" } }), 201);
    expect((await expectStatus(receipt(v, made.receipt as string), 200)).state).toBe("waiting");
  });
});

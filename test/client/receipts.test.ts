import { describe, expect, it } from "vitest";
import { parseReceipt, VaultApiError, VaultClient, VaultInputError } from "@ephemeral-vault/client";
import { buildTestVault, MASTER_KEY, rejection } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

/**
 * Receipts in the client library (docs/client.md, "Receipts"), against a
 * real in-process vault: share() answers the receipt; receipt() follows the
 * link's reads and its end; destroyByReceipt() deletes it; neither sends the
 * client's token (the receipt is the capability).
 */

/** A client whose fetch goes to the in-process app of `vault`; `sent` collects each request's Authorization header. */
function clientOf(vault: TestVault, sent: (string | null)[] = []): VaultClient {
  return new VaultClient({
    addr: "http://vault.test",
    token: MASTER_KEY,
    org: null,
    fetch: (url, init) => {
      const request = new Request(url, init);
      sent.push(`${request.method} ${new URL(request.url).pathname} ${request.headers.get("authorization") ?? "-"}`);
      return Promise.resolve(vault.app.request(request));
    },
  });
}

describe("client receipts", () => {
  it("share() answers a receipt; receipt() says waiting, then opened after a read, then burned; no token sent", async () => {
    const vault = buildTestVault();
    const sent: (string | null)[] = [];
    const client = clientOf(vault, sent);
    const shared = await client.share("the wifi password", { maxReads: 2, ttlSeconds: 3600 });
    expect(shared.receipt).toMatch(/^vrc_[A-Za-z0-9_-]{54}$/);
    expect(shared.url).not.toContain(shared.receipt);

    const waiting = await client.receipt(shared.receipt);
    expect(waiting).toEqual({ state: "waiting", createdAt: expect.any(Number), expiresAt: waiting.createdAt + 3600, maxReads: 2, readCount: 0, lastReadAt: null });

    expect(await client.open(shared.url)).toBe("the wifi password");
    const opened = await client.receipt(shared.receipt);
    expect(opened).toMatchObject({ state: "opened", readCount: 1, maxReads: 2 });
    expect(opened.lastReadAt).toBeGreaterThanOrEqual(opened.createdAt);

    expect(await client.open(shared.url)).toBe("the wifi password");
    expect(await client.receipt(shared.receipt)).toMatchObject({ state: "burned", readCount: 2 });

    const receiptCalls = sent.filter((line) => line?.includes("/receipts/"));
    expect(receiptCalls).toHaveLength(3);
    for (const line of receiptCalls) expect(line).toMatch(/ -$/);
  });

  it("destroyByReceipt() deletes the secret (the link is 404, the receipt says deleted); again: 409", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const shared = await client.share("destroy me", { maxReads: 3 });
    const destroyed = await client.destroyByReceipt(shared.receipt);
    expect(destroyed).toMatchObject({ state: "deleted", readCount: 0, maxReads: 3 });
    const gone = await rejection(client.open(shared.url));
    expect(gone).toBeInstanceOf(VaultApiError);
    expect((gone as VaultApiError).status).toBe(404);
    expect((await client.receipt(shared.receipt)).state).toBe("deleted");
    const again = await rejection(client.destroyByReceipt(shared.receipt));
    expect(again).toBeInstanceOf(VaultApiError);
    expect((again as VaultApiError).status).toBe(409);
    expect((again as VaultApiError).request).toBe("POST /receipts/<receipt>/destroy");
    expect((again as Error).message).not.toContain(shared.receipt);
  });

  it("takes a receipt link (<vault>/receipts/<token>) and asks at its address", async () => {
    const vault = buildTestVault();
    const seen: string[] = [];
    const sharer = clientOf(vault);
    const shared = await sharer.share("linked", { maxReads: 1 });
    const elsewhere = new VaultClient({
      addr: "http://unused.invalid",
      fetch: (url, init) => {
        seen.push(String(url));
        return Promise.resolve(vault.app.request(url, init));
      },
    });
    const link = `http://vault.test/base/receipts/${shared.receipt}`;
    expect(parseReceipt(link)).toEqual({ token: shared.receipt, base: "http://vault.test/base" });
    expect(parseReceipt(shared.receipt)).toEqual({ token: shared.receipt, base: undefined });
    // The in-process app has no /base prefix: the address shows, the answer is the app's 404.
    await rejection(elsewhere.receipt(link));
    expect(seen).toEqual([`http://vault.test/base/receipts/${shared.receipt}`]);
    expect((await elsewhere.receipt(`http://vault.test/receipts/${shared.receipt}`)).state).toBe("waiting");
  });

  it("an unknown receipt is a 404; a text that is no receipt is refused before any request", async () => {
    const vault = buildTestVault();
    const sent: (string | null)[] = [];
    const client = clientOf(vault, sent);
    const unknown = await rejection(client.receipt(`vrc_${"A".repeat(54)}`));
    expect((unknown as VaultApiError).status).toBe(404);
    expect(sent).toHaveLength(1);
    for (const bad of ["vrc_short", "sk_whatever", "http://vault.test/s/abc", "../keys", ""]) {
      const err = await rejection(client.receipt(bad));
      expect(err).toBeInstanceOf(VaultInputError);
      expect((err as VaultInputError).field).toBe("receipt");
    }
    expect(sent).toHaveLength(1);
  });
});

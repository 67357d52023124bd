import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { generateRootKey, ValueCipher } from "../../../src/crypto/cipher.js";
import { databaseAcme } from "../../../src/http/tls/acme-shared.js";
import { createRedirectServer } from "../../../src/http/tls/redirect.js";
import { buildTestWork } from "../../support/helpers.js";
import { makeCa, makeLeaf } from "../../support/tls-helpers.js";

// What the nodes of one database share for ACME (docs/deploy.md "Certificates by ACME"), on the
// engine under test: the certificate with its key sealed, the renewal lease one node holds at a
// time, and challenge answers that the redirect listener of any node serves.

const servers: import("node:http").Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe("the shared ACME rows", () => {
  it("keep the certificate with its key encrypted, readable with the same root key only", async () => {
    const rootKey = generateRootKey();
    const { tx, query } = buildTestWork(new ValueCipher(rootKey));
    const shared = databaseAcme(tx, new ValueCipher(rootKey));
    expect(await shared.load()).toBeUndefined();
    const pair = await makeLeaf(await makeCa());
    await shared.save(pair);
    expect(await shared.load()).toEqual(pair);
    const rows = await query("SELECT value FROM meta WHERE name = 'acme_certificate'");
    expect(String(rows[0]?.value)).toContain("BEGIN CERTIFICATE");
    expect(String(rows[0]?.value)).not.toContain("PRIVATE KEY");
    await expect(databaseAcme(tx, new ValueCipher(generateRootKey())).load()).rejects.toThrow();
  });

  it("give the renewal lease to one node at a time, until it is released or lapses", async () => {
    const { tx } = buildTestWork();
    const shared = databaseAcme(tx, new ValueCipher(generateRootKey()));
    const now = 1_000_000;
    const race = await Promise.all([shared.takeLease("a", now, 60_000), shared.takeLease("b", now, 60_000)]);
    expect(race.filter(Boolean)).toHaveLength(1);
    const [holder, other] = race[0] === true ? ["a", "b"] : ["b", "a"];
    expect(await shared.takeLease(other, now + 1000, 60_000)).toBe(false);
    expect(await shared.takeLease(holder, now + 1000, 60_000)).toBe(true);
    await shared.releaseLease(other);
    expect(await shared.takeLease(other, now + 2000, 60_000)).toBe(false);
    await shared.releaseLease(holder);
    expect(await shared.takeLease(other, now + 3000, 60_000)).toBe(true);
    // A holder that died: its lease lapses.
    expect(await shared.takeLease(holder, now + 3000 + 60_001, 60_000)).toBe(true);
  });

  it("let the redirect listener answer a challenge another node recorded, and 404 once it is removed", async () => {
    const { tx } = buildTestWork();
    const shared = databaseAcme(tx, new ValueCipher(generateRootKey()));
    await shared.putChallenge("tok-1", "tok-1.thumbprint");
    const limits = { headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 5000, maxConnections: 10 };
    const server = createRedirectServer({ tlsPort: 443, limits, challenge: (token) => shared.getChallenge(token) });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/acme-challenge/`;
    const found = await fetch(`${base}tok-1`);
    expect([found.status, await found.text()]).toEqual([200, "tok-1.thumbprint"]);
    await shared.removeChallenge("tok-1");
    expect((await fetch(`${base}tok-1`)).status).toBe(404);
    expect((await fetch(`${base}other`)).status).toBe(404);
  });
});

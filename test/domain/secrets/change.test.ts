import { describe, expect, it } from "vitest";
import { GLOBAL_SCOPE } from "../../../src/domain/secrets/model.js";
import { buildTestVault } from "../../support/helpers.js";
import { ORIGIN, READER, ORG, inTx, recordingLifecycle, rawRow, outcomeOf, expectVaultError } from "../../support/lifecycle-kit.js";

describe("SecretLifecycle: PATCH", () => {
  it("sets a new TTL counted from now", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 10 }, ORIGIN));
    v.clock.advance(8_000);
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 100 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ expiresAt: v.clock.now() + 100_000, readCount: 0 });
    v.clock.advance(50_000);
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("sets a new read limit counted from now: read_count resets to 0", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 3 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { maxReads: 2 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ maxReads: 2, readCount: 0, expiresAt: null });
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("ok");
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({
      secret: { readCount: 2 },
    });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
  });

  it("with only a TTL keeps the read limit and count", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 3 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 5 }, ORIGIN, { sealable: false }));
    expect(out).toMatchObject({ maxReads: 3, readCount: 1 });
  });

  it("refuses a PATCH with neither field (invalid) and changes nothing", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 10 }, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", {}, ORIGIN, { sealable: false })), "invalid");
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.expires_at).toBe(v.clock.now() + 10_000);
  });

  it("answers not_found for a missing or expired secret", async () => {
    const v = buildTestVault();
    expect(await outcomeOf(v, (w) => v.secrets.update(w, GLOBAL_SCOPE, "nope", { ttlSeconds: 5 }, ORIGIN, { sealable: false }))).toBe("not_found");
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    expect(await outcomeOf(v, (w) => v.secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 500 }, ORIGIN, { sealable: false }))).toBe("not_found");
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.state).toBe("expired");
  });

  it("makes a sealed secret active again with max_reads", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect((await rawRow(v, ORG, "k"))?.state).toBe("sealed");
    const out = await inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { maxReads: 2 }, ORIGIN, { sealable: true }));
    expect(out).toMatchObject({ state: "active", readCount: 0, maxReads: 2 });
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("keeps a sealed secret sealed when only the TTL changes", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    const out = await inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { ttlSeconds: 60 }, ORIGIN, { sealable: true }));
    expect(out).toMatchObject({ state: "sealed", readCount: 1, expiresAt: v.clock.now() + 60_000 });
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toBe("gone");
  });

  it("refuses (conflict) to patch a sealable-route secret that burns on its limit, and changes nothing", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 5 }, ORIGIN));
    await expectVaultError(
      inTx(v.tx, (w) => v.secrets.update(w, ORG, "k", { maxReads: 1 }, ORIGIN, { sealable: true })),
      "conflict",
    );
    expect((await rawRow(v, ORG, "k"))?.max_reads).toBe(5);
  });
});

describe("SecretLifecycle: delete and key reuse", () => {
  it("deletes an active secret", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    expect(await outcomeOf(v, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN))).toBe("ok");
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
    expect(await outcomeOf(v, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN))).toBe("not_found");
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
  });

  it("deletes a sealed secret", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.remove(w, ORG, "k", ORIGIN))).toMatchObject({ state: "sealed" });
    expect(await rawRow(v, ORG, "k")).toBeUndefined();
  });

  it("refuses a duplicate of an active key (conflict), also of a sealed one", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "w" }, ORIGIN)), "conflict");
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "s", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "s", READER, ORIGIN));
    await expectVaultError(inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "s", value: "w" }, ORIGIN)), "conflict");
    // the first value is untouched
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "v" });
  });

  it("allows the key again after a burn", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one", maxReads: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({
      value: "two",
      secret: { readCount: 1 },
    });
  });

  it("allows the key again after expiry, swept or not, keeping the tombstone for prune", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    // not swept yet
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two", ttlSeconds: 1 }, ORIGIN));
    v.clock.advance(1_000);
    await inTx(v.tx, (w) => v.secrets.expireDue(w, 10, ORIGIN));
    // swept
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "three" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "three" });
    expect(await inTx(v.tx, (w) => v.secrets.prune(w, GLOBAL_SCOPE, ORIGIN))).toBe(2);
  });

  it("allows the key again after a delete", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "one" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "k", ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "two" }, ORIGIN));
    expect(await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toMatchObject({ value: "two" });
  });
});

describe("SecretLifecycle: free-tier limit", () => {
  it("counts active and sealed secrets, not expired, burned or deleted ones", async () => {
    const { secrets, tx, clock } = recordingLifecycle({ activeLimit: 3 });
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "active", value: "v" }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: ORG, key: "sealed", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await inTx(tx, (w) => secrets.retrieve(w, ORG, "sealed", READER, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "third", value: "v", ttlSeconds: 1 }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(3);
    const err = await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    expect(err.error).toBe("free tier limit reached");
    expect(err.options.message).toMatch(/3 active secrets/);
    // an expired secret frees its slot, before and after the sweep
    clock.advance(1_000);
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "burns", value: "v", maxReads: 1 }, ORIGIN));
    await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    // a burned secret frees its slot
    await inTx(tx, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "burns", READER, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "deleted", value: "v" }, ORIGIN));
    await expectVaultError(inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN)), "limit");
    // a deleted secret frees its slot
    await inTx(tx, (w) => secrets.remove(w, GLOBAL_SCOPE, "deleted", ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "x", value: "v" }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(3);
  });

  it("has no limit when activeLimit is null", async () => {
    const { secrets, tx } = recordingLifecycle({ activeLimit: null });
    for (let i = 0; i < 150; i++) await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, value: `v${i}` }, ORIGIN));
    expect(await inTx(tx, (w) => secrets.countActive(w))).toBe(150);
  });
});

describe("SecretLifecycle: lists", () => {
  it("lists live secrets in creation order, page by page, without values", async () => {
    const v = buildTestVault();
    for (const key of ["a", "b", "c", "d", "e"]) {
      await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key, value: `value-of-${key}` }, ORIGIN));
    }
    const first = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2 }));
    expect(first.secrets.map((s) => s.key)).toEqual(["a", "b"]);
    expect(first.nextAfterId).not.toBeNull();
    const second = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2, afterId: first.nextAfterId ?? 0 }));
    expect(second.secrets.map((s) => s.key)).toEqual(["c", "d"]);
    const third = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 2, afterId: second.nextAfterId ?? 0 }));
    expect(third.secrets.map((s) => s.key)).toEqual(["e"]);
    expect(third.nextAfterId).toBeNull();
    expect(JSON.stringify([first, second, third])).not.toContain("value-of-");
  });

  it("omits expired-unswept, burned and deleted secrets and other scopes", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "expires", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "burns", value: "v", maxReads: 1 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "deleted", value: "v" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "live", value: "v", ttlSeconds: 100 }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "org", value: "v" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "burns", READER, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.remove(w, GLOBAL_SCOPE, "deleted", ORIGIN));
    v.clock.advance(1_000);
    const page = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100 }));
    expect(page.secrets.map((s) => s.key)).toEqual(["live"]);
    // the unswept one is still a row, just not shown
    expect((await rawRow(v, GLOBAL_SCOPE, "expires"))?.state).toBe("active");
  });

  it("filters by key prefix, leaving out public secrets, with glob characters taken literally", async () => {
    const v = buildTestVault();
    for (const key of ["app/a", "app/b", "other", "app*x", "app[1]"]) {
      await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key, value: "v" }, ORIGIN));
    }
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "public" }, ORIGIN));
    const page = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app/" }));
    expect(page.secrets.map((s) => s.key)).toEqual(["app/a", "app/b"]);
    const star = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app*" }));
    expect(star.secrets.map((s) => s.key)).toEqual(["app*x"]);
    const bracket = await inTx(v.tx, (w) => v.secrets.list(w, GLOBAL_SCOPE, { limit: 100, keyPrefix: "app[" }));
    expect(bracket.secrets.map((s) => s.key)).toEqual(["app[1]"]);
  });
});

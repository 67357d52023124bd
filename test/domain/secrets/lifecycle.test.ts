import { describe, expect, it } from "vitest";
import { GLOBAL_SCOPE } from "../../../src/domain/secrets/model.js";
import { buildTestVault } from "../../support/helpers.js";
import { ORIGIN, READER, ORG, inTx, rawRow, outcomeOf } from "../../support/lifecycle-kit.js";

describe("SecretLifecycle: create and read", () => {
  it("creates a keyed secret, active, with its times in milliseconds", async () => {
    const v = buildTestVault();
    const s = await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "db/pass", value: "hunter2", ttlSeconds: 60, maxReads: 3 }, ORIGIN),
    );
    expect(s).toMatchObject({
      scope: GLOBAL_SCOPE,
      key: "db/pass",
      isPublic: false,
      state: "active",
      createdAt: v.clock.now(),
      expiresAt: v.clock.now() + 60_000,
      maxReads: 3,
      readCount: 0,
      burnOnLimit: true,
    });
  });

  it("creates a public secret with a 64-hex id", async () => {
    const v = buildTestVault();
    const s = await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, value: "drop" }, ORIGIN));
    expect(s.isPublic).toBe(true);
    expect(s.key).toMatch(/^[0-9a-f]{64}$/);
    expect(s.expiresAt).toBeNull();
    expect(s.maxReads).toBeNull();
    const read = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, s.key, READER, ORIGIN));
    expect(read).toMatchObject({ value: "drop" });
  });

  it("counts each read and returns the count after it", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    for (let i = 1; i <= 3; i++) {
      const r = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
      expect(r.secret.readCount).toBe(i);
    }
    expect((await rawRow(v, GLOBAL_SCOPE, "k"))?.read_count).toBe(3);
  });

  it("stores only ciphertext, never the value", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "plain-text-value" }, ORIGIN));
    const row = await rawRow(v, GLOBAL_SCOPE, "k");
    expect(row?.ciphertext).toBeInstanceOf(Buffer);
    expect(row?.ciphertext?.toString("latin1")).not.toContain("plain-text-value");
  });

  it("answers not_found for a key that does not exist", async () => {
    const v = buildTestVault();
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "nope", READER, ORIGIN))).toBe("not_found");
  });

  it("keeps scopes apart: the same key in two scopes is two secrets", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "global" }, ORIGIN));
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "org" }, ORIGIN));
    const g = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    const o = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(g).toMatchObject({ value: "global" });
    expect(o).toMatchObject({ value: "org" });
  });
});

describe("SecretLifecycle: read limits", () => {
  it("burns the secret on the read that reaches max_reads", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 2 }, ORIGIN));
    const first = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(first).toMatchObject({ value: "v", secret: { readCount: 1, state: "active" } });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeDefined();
    const last = await inTx(v.tx, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(last).toMatchObject({ value: "v", secret: { readCount: 2, maxReads: 2 } });
    expect(await rawRow(v, GLOBAL_SCOPE, "k")).toBeUndefined();
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).toBe("not_found");
  });

  it("seals instead of burning when burnOnLimit is false, and later reads answer sealed", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) => v.secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    const last = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(last).toMatchObject({ value: "v", secret: { readCount: 1, state: "sealed" } });
    expect((await rawRow(v, ORG, "k"))?.state).toBe("sealed");
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN))).toBe("gone");
    expect((await rawRow(v, ORG, "k"))?.read_count).toBe(1);
    // a sealed secret still exists for HEAD and for org lists
    expect(await inTx(v.tx, (w) => v.secrets.peek(w, ORG, "k", ORIGIN))).toMatchObject({ state: "sealed" });
    const withSealed = await inTx(v.tx, (w) => v.secrets.list(w, ORG, { limit: 10, includeSealed: true }));
    expect(withSealed.secrets.map((s) => [s.key, s.state])).toEqual([["k", "sealed"]]);
    const activeOnly = await inTx(v.tx, (w) => v.secrets.list(w, ORG, { limit: 10 }));
    expect(activeOnly.secrets).toEqual([]);
  });

  it("checks allowed_keys: another principal key is forbidden, a listed key and the master key may read", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: ORG, key: "k", value: "v", allowedKeys: ["pk_allowed"], ownerId: "prn_owner" }, ORIGIN),
    );
    expect(await outcomeOf(v, (w) => v.secrets.retrieve(w, ORG, "k", { principalKeyId: "pk_other" }, ORIGIN))).toBe("forbidden");
    // the refused read did not count
    expect((await rawRow(v, ORG, "k"))?.read_count).toBe(0);
    const allowed = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", { principalKeyId: "pk_allowed" }, ORIGIN));
    expect(allowed).toMatchObject({ value: "v", secret: { allowedKeys: ["pk_allowed"], ownerId: "prn_owner" } });
    const master = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(master).toMatchObject({ value: "v", secret: { readCount: 2 } });
  });
});

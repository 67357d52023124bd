import { describe, expect, it } from "vitest";
import { ValueCipher, generateRootKey } from "../../../src/crypto/cipher.js";
import { SecretLifecycle } from "../../../src/domain/secrets/lifecycle.js";
import { GLOBAL_SCOPE } from "../../../src/domain/secrets/model.js";
import { buildTestWork, fakeClock } from "../../support/helpers.js";
import { ORIGIN, READER, ORG, inTx, recordingLifecycle, rawRow, outcomeOf } from "../../support/lifecycle-kit.js";
import type { Recorded } from "../../support/lifecycle-kit.js";

describe("SecretLifecycle: events", () => {
  const types = (r: Recorded) => r.events.map((e) => e.type);

  it("emits secret.created, then secret.read, then secret.read + secret.burned on the last read", async () => {
    const { secrets, tx, recorded } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "the-value", maxReads: 2, ttlSeconds: 60 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.read", "secret.read", "secret.burned"]);
    expect(recorded.events[1]).toMatchObject({ scope: GLOBAL_SCOPE, key: "k", isPublic: false, readCount: 1, maxReads: 2 });
    expect(recorded.events[3]).toMatchObject({ readCount: 2, maxReads: 2 });
    expect(recorded.events[0]?.expiresAt).toBe(Date.UTC(2026, 0, 1) + 60_000);
  });

  it("emits secret.read then secret.sealed for a secret that seals", async () => {
    const { secrets, tx, recorded } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: ORG, key: "k", value: "v", maxReads: 1, burnOnLimit: false }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, ORG, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.read", "secret.sealed"]);
    expect(recorded.events[2]).toMatchObject({ scope: ORG, readCount: 1 });
  });

  it("emits secret.expired (and no secret.read) when a read finds the TTL passed", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", ttlSeconds: 1 }, ORIGIN));
    clock.advance(1_000);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(types(recorded)).toEqual(["secret.created", "secret.expired"]);
  });

  it("emits secret.expired from the sweeper, secret.updated, secret.deleted, and the prune count", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "a", value: "v", ttlSeconds: 1 }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, value: "public" }, ORIGIN));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "b", value: "v" }, ORIGIN));
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "b", { maxReads: 4 }, ORIGIN, { sealable: false }));
    await outcomeOf({ tx, secrets }, (w) => secrets.remove(w, GLOBAL_SCOPE, "b", ORIGIN));
    clock.advance(1_000);
    await inTx(tx, (w) => secrets.expireDue(w, 10, ORIGIN));
    await inTx(tx, (w) => secrets.prune(w, GLOBAL_SCOPE, ORIGIN));
    expect(types(recorded)).toEqual([
      "secret.created",
      "secret.created",
      "secret.created",
      "secret.updated",
      "secret.deleted",
      "secret.expired",
    ]);
    expect(recorded.events[1]?.isPublic).toBe(true);
    expect(recorded.events[3]).toMatchObject({ key: "b", maxReads: 4, readCount: 0 });
    expect(recorded.pruned).toEqual([{ scope: GLOBAL_SCOPE, count: 1 }]);
  });

  it("emits nothing for a refused change (duplicate, limit, invalid PATCH, not found)", async () => {
    const { secrets, tx, recorded } = recordingLifecycle({ activeLimit: 1 });
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN));
    recorded.events.length = 0;
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v" }, ORIGIN)).catch(() => undefined);
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "other", value: "v" }, ORIGIN)).catch(() => undefined);
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "k", {}, ORIGIN, { sealable: false })).catch(() => undefined);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "missing", READER, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.remove(w, GLOBAL_SCOPE, "missing", ORIGIN));
    expect(recorded.events).toEqual([]);
  });

  it("never puts the value into an event", async () => {
    const { secrets, tx, recorded, clock } = recordingLifecycle();
    const value = "very-secret-value-7f3a";
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value, maxReads: 2 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    await inTx(tx, (w) => secrets.update(w, GLOBAL_SCOPE, "k", { ttlSeconds: 1 }, ORIGIN, { sealable: false }));
    await inTx(tx, (w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "b", value, maxReads: 1 }, ORIGIN));
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "b", READER, ORIGIN));
    clock.advance(1_000);
    await outcomeOf({ tx, secrets }, (w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN));
    expect(recorded.events.length).toBeGreaterThanOrEqual(6);
    const text = JSON.stringify(recorded.events);
    expect(text).not.toContain(value);
    for (const event of recorded.events) expect(Object.keys(event).sort()).toEqual(
      ["expiresAt", "isPublic", "key", "maxReads", "readCount", "rowId", "scope", "type"],
    );
  });

  it("rolls the change back when the event sink throws (fail closed)", async () => {
    const clock = fakeClock();
    let fail = false;
    const cipher = new ValueCipher(generateRootKey());
    const rec = buildTestWork(cipher);
    const secrets = new SecretLifecycle({
      cipher,
      events: {
        secretEvent: () => {
          if (fail) throw new Error("audit write failed");
        },
        secretsPruned: () => {},
        requestEvent: () => {},
      },
      now: clock.now,
      activeLimit: () => null,
    });
    const { tx } = rec;
    await tx.run((w) => secrets.create(w, { scope: GLOBAL_SCOPE, key: "k", value: "v", maxReads: 1 }, ORIGIN));
    fail = true;
    await expect(tx.run((w) => secrets.retrieve(w, GLOBAL_SCOPE, "k", READER, ORIGIN))).rejects.toThrow("audit write failed");
    expect(await rawRow(rec, GLOBAL_SCOPE, "k")).toMatchObject({ state: "active", read_count: 0 });
  });
});

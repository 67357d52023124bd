import { describe, expect, it } from "vitest";
import { buildTestWork } from "../support/helpers.js";
import type { NewSecret } from "../../src/store/secrets.js";

// The secrets stores' value version (store/secrets.ts SecretRecord.valueVersion; schema.sql
// version 19, schema-pg.sql version 9), on both engines: the insert writes 1, a replace moves it
// by one in the statement that writes the new ciphertext, and only from the version below the
// one its ciphertext was encrypted for.

const NOW = 1_700_000_000_000;

/** A global secret to insert at `now` (Unix ms): no limits, a ciphertext that is no real envelope (never opened here). */
function storeSecret(key: string, now: number): NewSecret {
  return { scope: "global", key, isPublic: false, ciphertext: Buffer.from("not a real envelope"), now, expiresAt: null, maxReads: null, burnOnLimit: true, ownerId: null, allowedKeys: null };
}

describe("SecretStore value versions", () => {
  it("insert writes 1; replace moves it by one with the ciphertext; every read returns it", async () => {
    const { tx, query } = buildTestWork();
    const inserted = await tx.run((w) => w.secrets.insert(storeSecret("vv/a", NOW)));
    expect(inserted.valueVersion).toBe(1);
    expect(await query("SELECT value_version FROM secrets WHERE key = 'vv/a'")).toEqual([{ value_version: 1 }]);
    const replacement = { ciphertext: Buffer.from("second"), expiresAt: null, maxReads: null, burnOnLimit: true, allowedKeys: null };
    const replaced = await tx.run((w) => w.secrets.replace(inserted.id, Object.assign({ valueVersion: 2 }, replacement), NOW + 1));
    expect(replaced).toMatchObject({ id: inserted.id, valueVersion: 2, createdAt: NOW });
    expect(replaced?.ciphertext?.toString()).toBe("second");
    expect((await tx.run((w) => w.secrets.live("global", "vv/a")))?.valueVersion).toBe(2);
    expect((await tx.run((w) => w.secrets.liveForChange("global", "vv/a")))?.valueVersion).toBe(2);
    expect((await tx.run((w) => w.secrets.countReadByKey("global", "vv/a", NOW + 2, null)))?.valueVersion).toBe(2);
    const listed = await tx.run((w) => w.secrets.list({ scope: "global", now: NOW, afterId: 0, includeSealed: false, keyPrefix: undefined, limit: 10 }));
    expect(listed.map((r) => r.valueVersion)).toEqual([2]);
  });

  it("a replace encrypted for a version that is not the row's next one writes nothing", async () => {
    const { tx, query } = buildTestWork();
    const inserted = await tx.run((w) => w.secrets.insert(storeSecret("vv/b", NOW)));
    const replacement = { ciphertext: Buffer.from("stale"), expiresAt: null, maxReads: null, burnOnLimit: true, allowedKeys: null };
    for (const valueVersion of [1, 3]) {
      expect(await tx.run((w) => w.secrets.replace(inserted.id, Object.assign({ valueVersion }, replacement), NOW + 1))).toBeUndefined();
    }
    const [row] = (await query("SELECT ciphertext, value_version FROM secrets WHERE key = 'vv/b'")) as unknown as { ciphertext: Buffer; value_version: number }[];
    expect(row?.value_version).toBe(1);
    expect(row?.ciphertext.toString()).toBe("not a real envelope");
  });
});

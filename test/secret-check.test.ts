/**
 * SecretLifecycle.check() (HEAD): the existence check decides `allowed_keys`
 * and sealing in the domain, in the same order as a read, and counts nothing.
 */
import { describe, expect, it } from "vitest";
import type { Origin } from "../src/domain/events.js";
import type { GroupCommit } from "../src/group-commit.js";
import { buildTestVault } from "./helpers.js";

const ORIGIN: Origin = { actor: "master", principalId: null, ip: null };
const ORG = "org_checktest";

function inTx<T>(tx: GroupCommit, fn: () => T): Promise<T> {
  return tx.run(fn);
}

describe("SecretLifecycle.check", () => {
  it("refuses a principal key outside allowed_keys, admits a listed one and the master key", async () => {
    const v = buildTestVault();
    await inTx(v.tx, () =>
      v.secrets.create({ scope: ORG, key: "k", value: "v", allowedKeys: ["pk_listed"] }, ORIGIN),
    );
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "k", { principalKeyId: "pk_other" }, ORIGIN))).toEqual({
      kind: "forbidden",
    });
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "k", { principalKeyId: "pk_listed" }, ORIGIN))).toMatchObject({
      kind: "ok",
      secret: { key: "k", readCount: 0 },
    });
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "k", { principalKeyId: null }, ORIGIN))).toMatchObject({ kind: "ok" });
    // No read was counted by any check.
    const read = await inTx(v.tx, () => v.secrets.retrieve(ORG, "k", { principalKeyId: null }, ORIGIN));
    expect(read).toMatchObject({ kind: "ok", secret: { readCount: 1 } });
  });

  it("answers not_found before forbidden, and forbidden before sealed", async () => {
    const v = buildTestVault();
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "nope", { principalKeyId: "pk_other" }, ORIGIN))).toEqual({
      kind: "not_found",
    });
    await inTx(v.tx, () =>
      v.secrets.create({ scope: ORG, key: "s", value: "v", maxReads: 1, burnOnLimit: false, allowedKeys: ["pk_listed"] }, ORIGIN),
    );
    await inTx(v.tx, () => v.secrets.retrieve(ORG, "s", { principalKeyId: "pk_listed" }, ORIGIN));
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "s", { principalKeyId: "pk_other" }, ORIGIN))).toEqual({
      kind: "forbidden",
    });
    expect(await inTx(v.tx, () => v.secrets.check(ORG, "s", { principalKeyId: "pk_listed" }, ORIGIN))).toEqual({
      kind: "sealed",
    });
  });
});

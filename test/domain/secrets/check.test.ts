/**
 * SecretLifecycle.check() (HEAD): the existence check decides `allowed_keys`
 * and sealing in the domain, in the same order as a read, and counts nothing;
 * its refusals are VaultErrors (not_found, forbidden, gone).
 */
import { describe, expect, it } from "vitest";
import { VaultError } from "../../../src/model/errors.js";
import type { VaultErrorKind } from "../../../src/model/errors.js";
import type { Origin } from "../../../src/domain/events.js";
import type { Awaitable, UnitOfWork, Work } from "../../../src/store/work.js";
import { buildTestVault } from "../../support/helpers.js";

const ORIGIN: Origin = { actor: "master", principalId: null, ip: null };
const ORG = "org_checktest";

/** The kind of the VaultError `p` rejects with (a check's refusal). */
async function refusalOf(p: Promise<unknown>): Promise<VaultErrorKind> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VaultError);
  return (err as VaultError).kind;
}

function inTx<T>(tx: UnitOfWork<Work>, fn: (w: Work) => Awaitable<T>): Promise<T> {
  return tx.run(fn);
}

describe("SecretLifecycle.check", () => {
  it("refuses a principal key outside allowed_keys, admits a listed one and the master key", async () => {
    const v = buildTestVault();
    await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: ORG, key: "k", value: "v", allowedKeys: ["pk_listed"] }, ORIGIN),
    );
    expect(await refusalOf(inTx(v.tx, (w) => v.secrets.check(w, ORG, "k", { principalKeyId: "pk_other" })))).toBe("forbidden");
    expect(await inTx(v.tx, (w) => v.secrets.check(w, ORG, "k", { principalKeyId: "pk_listed" }))).toMatchObject({ key: "k", readCount: 0 });
    expect(await inTx(v.tx, (w) => v.secrets.check(w, ORG, "k", { principalKeyId: null }))).toMatchObject({ key: "k" });
    // No read was counted by any check.
    const read = await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "k", { principalKeyId: null }, ORIGIN));
    expect(read).toMatchObject({ secret: { readCount: 1 } });
  });

  it("answers not_found before forbidden, and forbidden before sealed", async () => {
    const v = buildTestVault();
    expect(await refusalOf(inTx(v.tx, (w) => v.secrets.check(w, ORG, "nope", { principalKeyId: "pk_other" })))).toBe("not_found");
    await inTx(v.tx, (w) =>
      v.secrets.create(w, { scope: ORG, key: "s", value: "v", maxReads: 1, burnOnLimit: false, allowedKeys: ["pk_listed"] }, ORIGIN),
    );
    await inTx(v.tx, (w) => v.secrets.retrieve(w, ORG, "s", { principalKeyId: "pk_listed" }, ORIGIN));
    expect(await refusalOf(inTx(v.tx, (w) => v.secrets.check(w, ORG, "s", { principalKeyId: "pk_other" })))).toBe("forbidden");
    expect(await refusalOf(inTx(v.tx, (w) => v.secrets.check(w, ORG, "s", { principalKeyId: "pk_listed" })))).toBe("gone");
  });
});

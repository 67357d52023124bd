import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";

// store/sql/reveal-checks.ts withCheck on both engines: which public ids of a page have a reveal
// check, in one statement (the console's Kind, docs/console.md "Secrets").

const CHECK = "A".repeat(43);

async function publicSecret(v: TestVault, withCheck: boolean): Promise<string> {
  const res = await v.asMaster("POST", "/secrets", withCheck ? { value: "v", reveal_check: CHECK } : { value: "v" });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describe("RevealCheckStore.withCheck", () => {
  it("answers the subset of the ids that have a check, for ids that exist or not, and an empty set for none", async () => {
    const v = buildTestVault();
    const checked = [await publicSecret(v, true), await publicSecret(v, true)];
    const plain = [await publicSecret(v, false), await publicSecret(v, false)];
    const unknown = ["f".repeat(64), "x' OR 1=1 --", ""];
    const ids = [plain[0], checked[0], ...unknown, plain[1], checked[1]] as string[];
    const found = await v.tx.run((w) => w.revealChecks.withCheck(ids));
    expect([...found].sort()).toEqual([...checked].sort());
    expect((await v.tx.run((w) => w.revealChecks.withCheck(plain))).size).toBe(0);
    expect((await v.tx.run((w) => w.revealChecks.withCheck([]))).size).toBe(0);
  });

  it("takes a page of 1000 ids in its one statement", async () => {
    const v = buildTestVault();
    const checked = await publicSecret(v, true);
    const ids = Array.from({ length: 999 }, (_, i) => i.toString(16).padStart(64, "0"));
    ids.splice(500, 0, checked);
    expect([...(await v.tx.run((w) => w.revealChecks.withCheck(ids)))]).toEqual([checked]);
  });
});

import { describe, expect, it } from "vitest";
import { prepareReveal, sealEnvelope } from "@ephemeral-vault/client";
import { buildTestVault } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// POST /s/<id>/destroy on the engine under test (docs/share.md, "Receipts"): the recipient
// page's "Destroy it now". A link holder destroys what they could read: the reveal's proof for
// a secret made with a reveal check, the id alone for one without; no token, no receipt.

const destroy = (v: TestVault, id: string, proof?: string) =>
  v.request("POST", `/s/${id}/destroy`, proof === undefined ? { token: null } : { token: null, body: { proof } });

/** An end-to-end public secret as the client makes it: its id, receipt and the reveal proof of its link key. */
async function e2eSecret(v: TestVault, maxReads: number): Promise<{ id: string; receipt: string; proof: string }> {
  const sealed = await sealEnvelope("the value", {});
  const res = await v.asMaster("POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: maxReads });
  expect(res.status).toBe(201);
  const { id, receipt } = (await res.json()) as { id: string; receipt: string };
  return { id, receipt, proof: (await prepareReveal(sealed.linkKey, undefined)).proof };
}

async function auditOf(v: TestVault, key: string): Promise<Array<{ action: string; actor: string | null }>> {
  const body = (await (await v.asMaster("GET", `/audit?key=${key}`)).json()) as { entries: Array<{ action: string; actor: string | null }> };
  return body.entries.reverse();
}

describe("POST /s/<id>/destroy", () => {
  it("with the reveal's proof, after a read that left one over: 200 {state: deleted}; the link is 404, the receipt says deleted; audit actor share-page", async () => {
    const v = buildTestVault();
    const { id, receipt, proof } = await e2eSecret(v, 2);
    expect((await v.request("POST", `/s/${id}/reveal`, { token: null, body: { proof } })).status).toBe(200);
    const res = await destroy(v, id, proof);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toMatch(/no-store/);
    expect(await res.json()).toEqual({ state: "deleted" });
    expect((await v.request("POST", `/s/${id}/reveal`, { token: null, body: { proof } })).status).toBe(404);
    expect((await v.request("GET", `/s/${id}`, { token: null })).status).toBe(404);
    const r = (await (await v.request("GET", `/receipts/${receipt}`, { token: null })).json()) as { state: string; read_count: number };
    expect(r).toMatchObject({ state: "deleted", read_count: 1 });
    expect(await auditOf(v, id)).toEqual([
      expect.objectContaining({ action: "secret.created" }),
      expect.objectContaining({ action: "secret.read", actor: "share-page" }),
      expect.objectContaining({ action: "secret.deleted", actor: "share-page" }),
    ]);
    // Gone: a second destroy is a 404.
    expect((await destroy(v, id, proof)).status).toBe(404);
  });

  it("a missing or wrong proof is 403 and destroys nothing, counts no refusal of the reveal", async () => {
    const v = buildTestVault();
    const { id, receipt, proof } = await e2eSecret(v, 1);
    const other = (await prepareReveal((await sealEnvelope("x", {})).linkKey, undefined)).proof;
    for (const wrong of [undefined, other, "not-a-proof"]) {
      const res = await destroy(v, id, wrong);
      expect(res.status).toBe(403);
      const body = JSON.stringify(await res.json());
      expect(body).not.toContain(proof);
    }
    const r = (await (await v.request("GET", `/receipts/${receipt}`, { token: null })).json()) as { state: string };
    expect(r.state).toBe("waiting");
    expect((await auditOf(v, id)).map((e) => e.action)).toEqual(["secret.created"]);
    expect((await v.request("POST", `/s/${id}/reveal`, { token: null, body: { proof } })).status).toBe(200);
  });

  it("a plain public secret (no reveal check): the id is the capability, as for its reveal", async () => {
    const v = buildTestVault();
    const made = (await (await v.asMaster("POST", "/secrets", { value: "plain", max_reads: 3 })).json()) as { id: string };
    expect((await destroy(v, made.id)).status).toBe(200);
    expect((await v.request("POST", `/s/${made.id}/reveal`, { token: null })).status).toBe(404);
  });

  it("never reaches a keyed secret, an unknown id, or a malformed one: 404", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "team/db", value: "keyed" })).status).toBe(201);
    expect((await destroy(v, "team/db")).status).toBe(404);
    expect((await destroy(v, "c".repeat(64))).status).toBe(404);
    expect((await destroy(v, "zz")).status).toBe(404);
    expect((await v.asMaster("GET", "/secrets/team/db")).status).toBe(200);
  });

  it("a secret past its TTL is expired, not deleted: 404, and its receipt says expired", async () => {
    const v = buildTestVault();
    const made = (await (await v.asMaster("POST", "/secrets", { value: "short", ttl_seconds: 60 })).json()) as { id: string; receipt: string };
    v.clock.advance(61_000);
    expect((await destroy(v, made.id)).status).toBe(404);
    const r = (await (await v.request("GET", `/receipts/${made.receipt}`, { token: null })).json()) as { state: string };
    expect(r.state).toBe("expired");
    expect((await auditOf(v, made.id)).map((e) => e.action)).toContain("secret.expired");
  });
});

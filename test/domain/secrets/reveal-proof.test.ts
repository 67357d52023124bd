import { createHash, hkdfSync, pbkdf2Sync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseEnvelope, prepareReveal, sealEnvelope } from "@ephemeral-vault/client";
import { buildTestVault } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";

// The reveal proof (docs/share.md, "The reveal proof") in process, on both engines: a read is spent
// only by a request that proves it holds the link's key (and passphrase); refusals count no read,
// are audited, count against the brute-force guard and burn the secret at max_failed_reveals.

async function shared(v: TestVault, extra: Record<string, unknown> = {}, passphrase?: string) {
  const sealed = await sealEnvelope("the value", { passphrase });
  const res = await v.asMaster("POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 2, ...extra });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const proof = (await prepareReveal(sealed.linkKey, passphrase)).proof;
  return { id, proof, linkKey: sealed.linkKey, envelope: sealed.envelope };
}

const reveal = (v: TestVault, id: string, proof?: string, headers: Record<string, string> = {}) =>
  v.request("POST", `/s/${id}/reveal`, { token: null, headers, ...(proof === undefined ? {} : { body: { proof } }) });

async function readCount(v: TestVault, id: string): Promise<number | undefined> {
  const body = (await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ id?: string; read_count: number }> };
  return body.secrets.find((s) => s.id === id)?.read_count;
}

async function actions(v: TestVault, id: string): Promise<string[]> {
  const body = (await (await v.asMaster("GET", `/audit?key=${id}`)).json()) as { entries: Array<{ action: string }> };
  return body.entries.reverse().map((e) => e.action);
}

const WRONG = "A".repeat(43);

describe("POST /s/<id>/reveal with a reveal check", () => {
  it("refuses a wrong or missing proof with 403, counting no read; the right proof reads", async () => {
    const v = buildTestVault();
    const { id, proof } = await shared(v);
    for (const p of [WRONG, undefined, "not a proof", proof.slice(0, 42)]) {
      const res = await reveal(v, id, p);
      expect(res.status).toBe(403);
      const body = (await res.json()) as { error: string };
      expect(typeof body.error).toBe("string");
      expect(JSON.stringify(body)).not.toContain(proof);
    }
    expect(await readCount(v, id)).toBe(0);
    const ok = await reveal(v, id, proof);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { read_count: number }).read_count).toBe(1);
    expect(await readCount(v, id)).toBe(1);
    expect(await actions(v, id)).toEqual(["secret.created", ...Array(4).fill("secret.reveal_refused"), "secret.read"]);
  });

  it("keeps neither the proof nor the check in the audit rows, and stores only the check's hash", async () => {
    const v = buildTestVault();
    const { id, proof } = await shared(v);
    await reveal(v, id, WRONG);
    const rows = await v.query("SELECT * FROM audit");
    expect(JSON.stringify(rows)).not.toContain(proof);
    const checks = (await v.query("SELECT key, check_hash FROM reveal_checks")) as Array<{ key: string; check_hash: Buffer }>;
    expect(checks).toHaveLength(1);
    expect(checks[0]?.check_hash.toString("base64url")).not.toBe(proof);
    expect(checks[0]?.check_hash.equals(createHash("sha256").update(Buffer.from(proof, "base64url")).digest())).toBe(true);
  });

  it("burns the secret after max_failed_reveals refusals, also when they arrive at once, and never reads it", async () => {
    const v = buildTestVault();
    const { id, proof } = await shared(v, { max_failed_reveals: 3 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => reveal(v, id, WRONG)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([403, 403, 403, 404, 404, 404]);
    expect((await reveal(v, id, proof)).status).toBe(404);
    const a = await actions(v, id);
    expect(a.filter((x) => x === "secret.reveal_refused")).toHaveLength(3);
    expect(a.filter((x) => x === "secret.read")).toHaveLength(0);
    expect(a.slice(-2)).toEqual(["secret.reveal_limit_reached", "secret.burned"]);
    expect(await v.query("SELECT * FROM reveal_checks")).toEqual([]);
  });

  it("a stranger with the id only can neither spend nor burn a secret without max_failed_reveals", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 1000 });
    const { id, proof } = await shared(v);
    for (let i = 0; i < 20; i++) expect((await reveal(v, id, WRONG)).status).toBe(403);
    expect(await readCount(v, id)).toBe(0);
    expect((await reveal(v, id, proof)).status).toBe(200);
  });

  it("counts refusals against the brute-force guard (429 once over it)", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    const { id, proof } = await shared(v);
    const from = { "X-Forwarded-For": "203.0.113.9" };
    for (let i = 0; i < 3; i++) expect((await reveal(v, id, WRONG, from)).status).toBe(403);
    expect((await reveal(v, id, proof, from)).status).toBe(429);
    expect(await readCount(v, id)).toBe(0);
  });

  it("the 429 after refused proofs says so: the recipient page and the reveal's answer name wrong passphrases, not only missing links", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    const { id, proof } = await shared(v, {}, "correct horse battery");
    const from = { "X-Forwarded-For": "203.0.113.10" };
    for (let i = 0; i < 3; i++) expect((await reveal(v, id, WRONG, from)).status).toBe(403);
    const page = await v.request("GET", `/s/${id}`, { token: null, headers: from });
    expect(page.status).toBe(429);
    const html = await page.text();
    expect(html).toContain("Too many attempts");
    expect(html).toContain("reveals with a wrong passphrase or an incomplete link");
    expect(html).toContain("Nothing was read");
    const refused = await reveal(v, id, proof, from);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(((await refused.json()) as { error: string }).error).toMatch(/wrong reveal proofs/);
    expect(await readCount(v, id)).toBe(0);
    // The same page after misses only says that too: one limiter, one text for both.
    const misses = { "X-Forwarded-For": "203.0.113.11" };
    for (let i = 0; i < 3; i++) expect((await v.request("GET", `/s/${"d".repeat(64)}`, { token: null, headers: misses })).status).toBe(404);
    const missPage = await v.request("GET", `/s/${id}`, { token: null, headers: misses });
    expect(missPage.status).toBe(429);
    expect(await missPage.text()).toContain("links that do not exist");
  });

  it("needs the passphrase in the proof for a passphrase link", async () => {
    const v = buildTestVault();
    const { id, linkKey } = await shared(v, {}, "a long passphrase here");
    const withoutPass = (await prepareReveal(linkKey)).proof;
    const wrongPass = (await prepareReveal(linkKey, "another passphrase")).proof;
    expect((await reveal(v, id, withoutPass)).status).toBe(403);
    expect((await reveal(v, id, wrongPass)).status).toBe(403);
    const right = await prepareReveal(linkKey, "a long passphrase here");
    const res = await reveal(v, id, right.proof);
    expect(res.status).toBe(200);
    const env = parseEnvelope(((await res.json()) as { value: string }).value);
    expect(env?.v).toBe(2);
    expect(await right.open(env as NonNullable<typeof env>)).toBe("the value");
  });

  it("leaves a token holder's GET /secrets/<id> a read, and secrets without a check as before", async () => {
    const v = buildTestVault();
    const { id } = await shared(v);
    expect((await v.asMaster("GET", `/secrets/${id}`)).status).toBe(200);
    const old = await v.asMaster("POST", "/secrets", { value: "no check" });
    const oldId = ((await old.json()) as { id: string }).id;
    expect((await reveal(v, oldId)).status).toBe(200);
  });

  it("refuses reveal_check on a keyed secret and max_failed_reveals without reveal_check", async () => {
    const v = buildTestVault();
    expect((await v.asMaster("POST", "/secrets", { key: "k", value: "x", reveal_check: WRONG })).status).toBe(400);
    expect((await v.asMaster("POST", "/secrets", { value: "x", max_failed_reveals: 2 })).status).toBe(400);
    expect((await v.asMaster("POST", "/secrets", { value: "x", reveal_check: "short" })).status).toBe(400);
  });
});

describe("the reveal proof's test vectors (docs/share.md)", () => {
  // Recomputed here step by step with node:crypto, independently of the client's WebCrypto code.
  const linkKey = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
  const passphrase = "correct horse battery staple";
  const salt = Buffer.from(hkdfSync("sha256", linkKey, Buffer.alloc(0), "ephemeral-vault share v2 salt", 16));
  const P = pbkdf2Sync(Buffer.from(passphrase.normalize("NFC"), "utf8"), salt, 600_000, 32, "sha256");
  const proofNone = Buffer.from(hkdfSync("sha256", linkKey, Buffer.alloc(0), "ephemeral-vault reveal proof v2", 32));
  const proofPass = Buffer.from(hkdfSync("sha256", Buffer.concat([linkKey, P]), salt, "ephemeral-vault reveal proof v2", 32));
  const check = (p: Buffer) => createHash("sha256").update(p).digest().toString("base64url");

  it("matches the client and the published values", async () => {
    const key = linkKey.toString("base64url");
    expect((await prepareReveal(key)).proof).toBe(proofNone.toString("base64url"));
    expect((await prepareReveal(key, passphrase)).proof).toBe(proofPass.toString("base64url"));
    const random = { linkKey: new Uint8Array(linkKey), iv: new Uint8Array(Array.from({ length: 12 }, (_, i) => 0xa0 + i)) };
    expect((await sealEnvelope("hello, world\n", { random })).revealCheck).toBe(check(proofNone));
    expect((await sealEnvelope("hello, world\n", { random, passphrase })).revealCheck).toBe(check(proofPass));
    expect(salt.toString("base64url")).toBe("ePITTDWpbLkcRH6Jwvmjdw");
    expect(proofNone.toString("base64url")).toBe("qgV_F9VzMMpHPyPYmZs7UAe1VZb_lnEgKK_Y2_pc8lA");
    expect(check(proofNone)).toBe("JY_eyqG7UjIg7xCrYaIodb8FtzjaKIlnrpD1By4LNZA");
    expect(proofPass.toString("base64url")).toBe("0yNe-0hwrG2IjbhjQ3A5Sb2BlwqG7wu9T0oEzDvlQoE");
    expect(check(proofPass)).toBe("5imDDz6aRMvbgky7gr1vq6E7mKvcrxOrjZunRNx-aOg");
  });
});

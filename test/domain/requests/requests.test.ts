import { createECDH, createPublicKey } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateRequestKeys, openAnswer, requestRevealProof, sealAnswer } from "../../../packages/client/src/request-envelope.js";
import { createLogger } from "../../../src/log/log.js";
import { startSweeper } from "../../../src/runtime/sweeper.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../support/org-helpers.js";

// Requests end to end in process, on the engine under test (docs/requests.md):
// made with a token, answered without one at /r/<id>/answer, read with the
// asker's proof at /r/<id>/reveal.

const DAY = 86_400;

interface Made {
  id: string;
  url: string;
  keys: { publicKey: string; privateKey: string };
  proof: string;
  body: Record<string, unknown>;
}

/** Makes a request with a fresh key pair (and its reveal check) through POST /requests. */
async function makeRequest(v: TestVault, extra: Record<string, unknown> = {}, token?: string, path = "/requests"): Promise<Made> {
  const keys = await generateRequestKeys();
  const { proof, revealCheck } = await requestRevealProof(keys.privateKey);
  const body = await expectStatus(
    v.request("POST", path, { token, body: { description: "the billing API key", public_key: keys.publicKey, reveal_check: revealCheck, ...extra } }),
    201,
  );
  return { id: body.id as string, url: body.url as string, keys, proof, body };
}

function answer(v: TestVault, id: string, value: string): Promise<Response> {
  return v.request("POST", `/r/${id}/answer`, { token: null, body: { value } });
}

function reveal(v: TestVault, id: string, proof: string | undefined): Promise<Response> {
  return v.request("POST", `/r/${id}/reveal`, { token: null, body: proof === undefined ? {} : { proof } });
}

describe("POST /requests", () => {
  it("makes an open request: a 256-bit id, the answer link, the defaults (7 days, one read)", async () => {
    const v = buildTestVault();
    const made = await makeRequest(v);
    expect(made.id).toMatch(/^[0-9a-f]{64}$/);
    const now = Math.floor(v.clock.now() / 1000);
    expect(made.body).toEqual({
      id: made.id,
      url: `http://vault.test/r/${made.id}`,
      description: "the billing API key",
      asker: "the vault's administrator",
      public_key: made.keys.publicKey,
      state: "open",
      max_reads: 1,
      ttl_seconds: 7 * DAY,
      created_at: now,
      expires_at: now + 7 * DAY,
      answered_at: null,
      answer_id: null,
    });
    expect(await expectStatus(v.asMaster("GET", `/requests/${made.id}`), 200)).toEqual(made.body);
    expect((await expectStatus(v.asMaster("GET", "/requests"), 200)).requests).toEqual([made.body]);
  });

  it("takes the public key as a JWK, an SPKI PEM or base64 DER, and answers the base64url point", async () => {
    const v = buildTestVault();
    const ecdh = createECDH("prime256v1");
    ecdh.generateKeys();
    const point = ecdh.getPublicKey().toString("base64url");
    const jwk = { kty: "EC", crv: "P-256", x: ecdh.getPublicKey().subarray(1, 33).toString("base64url"), y: ecdh.getPublicKey().subarray(33).toString("base64url") };
    const keyObject = createPublicKey({ key: jwk, format: "jwk" });
    const pem = keyObject.export({ type: "spki", format: "pem" }).toString();
    const der = keyObject.export({ type: "spki", format: "der" }).toString("base64");
    const compressed = ecdh.getPublicKey(null, "compressed").toString("base64url");
    for (const given of [jwk, pem, der, compressed, ecdh.getPublicKey().toString("base64")]) {
      const body = await expectStatus(v.asMaster("POST", "/requests", { description: "d", public_key: given }), 201);
      expect(body.public_key).toBe(point);
    }
  });

  it("refuses bad input with 400 and makes nothing", async () => {
    const v = buildTestVault();
    const { publicKey } = await generateRequestKeys();
    const notOnCurve = Buffer.concat([Buffer.of(4), Buffer.alloc(64, 7)]).toString("base64url");
    const bad: Record<string, unknown>[] = [
      { public_key: publicKey },
      { description: "", public_key: publicKey },
      { description: "a\u0007bell", public_key: publicKey },
      { description: "x".repeat(1001), public_key: publicKey },
      { description: "d" },
      { description: "d", public_key: notOnCurve },
      { description: "d", public_key: "not a key" },
      { description: "d", public_key: { kty: "EC", crv: "P-384", x: "a", y: "b" } },
      { description: "d", public_key: publicKey, ttl_seconds: 30 * DAY + 1 },
      { description: "d", public_key: publicKey, ttl_seconds: 0 },
      { description: "d", public_key: publicKey, max_reads: 0 },
      { description: "d", public_key: publicKey, reveal_check: "short" },
    ];
    for (const body of bad) {
      const res = await v.asMaster("POST", "/requests", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe("string");
    }
    expect((await expectStatus(v.asMaster("GET", "/requests"), 200)).requests).toEqual([]);
  });

  it("needs write to ask, read to look, delete to delete; a key sees the requests it made, an admin key every one", async () => {
    const v = buildTestVault();
    const writer = await createKey(v, { name: "ci deploy", permissions: ["read", "write"] });
    const other = await createKey(v, { name: "other", permissions: ["read", "write", "delete"] });
    const reader = await createKey(v, { name: "reader", permissions: ["read"] });
    const admin = await createKey(v, { name: "admin", permissions: ["admin"] });
    const { publicKey } = await generateRequestKeys();
    expect((await v.request("POST", "/requests", { token: reader.token, body: { description: "d", public_key: publicKey } })).status).toBe(403);
    expect((await v.request("POST", "/requests", { token: null, body: { description: "d", public_key: publicKey } })).status).toBe(401);
    const made = await makeRequest(v, {}, writer.token);
    expect(made.body.asker).toBe("ci deploy");
    expect((await v.request("GET", `/requests/${made.id}`, { token: other.token })).status).toBe(404);
    expect((await expectStatus(v.request("GET", "/requests", { token: other.token }), 200)).requests).toEqual([]);
    expect((await v.request("DELETE", `/requests/${made.id}`, { token: other.token })).status).toBe(404);
    expect((await expectStatus(v.request("GET", "/requests", { token: admin.token }), 200)).requests).toHaveLength(1);
    expect((await expectStatus(v.request("GET", `/requests/${made.id}`, { token: writer.token }), 200)).id).toBe(made.id);
    expect((await v.request("DELETE", `/requests/${made.id}`, { token: writer.token })).status).toBe(403);
  });
});

describe("answering and reading", () => {
  it("takes one answer without a token, and only the holder of the private key reads it, byte-exact", async () => {
    const v = buildTestVault();
    const made = await makeRequest(v, { max_reads: 2 });
    const value = "line one\r\nline two 🔑\n\u0000end";
    // Before the answer: the right proof learns it is open; a wrong one is refused.
    expect(await expectStatus(reveal(v, made.id, made.proof), 409)).toMatchObject({ state: "open" });
    expect((await reveal(v, made.id, "A".repeat(43))).status).toBe(403);
    const sealed = await sealAnswer(made.keys.publicKey, made.id, value);
    const answered = await expectStatus(answer(v, made.id, sealed), 201);
    expect(answered.state).toBe("answered");
    expect((await answer(v, made.id, await sealAnswer(made.keys.publicKey, made.id, "another"))).status).toBe(409);
    const got = await expectStatus(v.asMaster("GET", `/requests/${made.id}`), 200);
    expect(got.state).toBe("answered");
    expect(got.answer_id).toMatch(/^[0-9a-f]{64}$/);
    expect(got.expires_at).toBe(Math.floor(v.clock.now() / 1000) + 7 * DAY);
    // Without the proof (a preview, the person asked who knows the id): nothing is spent.
    expect((await reveal(v, made.id, undefined)).status).toBe(403);
    expect((await v.request("POST", `/s/${got.answer_id}/reveal`, { token: null, body: {} })).status).toBe(403);
    const read = await expectStatus(reveal(v, made.id, made.proof), 200);
    expect(read).toMatchObject({ id: got.answer_id, read_count: 1, max_reads: 2 });
    expect(await openAnswer(made.keys.privateKey, made.id, read.value as string)).toBe(value);
    // The answer is a public secret: its own reveal route spends the same reads.
    const second = await expectStatus(v.request("POST", `/s/${got.answer_id}/reveal`, { token: null, body: { proof: made.proof } }), 200);
    expect(second.read_count).toBe(2);
    expect((await reveal(v, made.id, made.proof)).status).toBe(404);
  });

  it("of 20 answers racing, exactly one is stored", async () => {
    const v = buildTestVault({ share: { page: true, anonymous: false, anonymousPerMinute: 1000 } });
    const made = await makeRequest(v);
    const bodies = await Promise.all(Array.from({ length: 20 }, (_, i) => sealAnswer(made.keys.publicKey, made.id, `answer ${i}`)));
    const statuses = await Promise.all(bodies.map((b) => answer(v, made.id, b).then((r) => r.status)));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const rows = await v.query("SELECT key FROM secrets WHERE is_public = 1");
    expect(rows).toHaveLength(1);
    const read = await expectStatus(reveal(v, made.id, made.proof), 200);
    expect(await openAnswer(made.keys.privateKey, made.id, read.value as string)).toMatch(/^answer \d+$/);
  });

  it("refuses what is not an answer envelope, what is too large, and answers over the per-address rate", async () => {
    const v = buildTestVault({ maxValueBytes: 1024, share: { page: true, anonymous: false, anonymousPerMinute: 3 } });
    const made = await makeRequest(v);
    expect((await answer(v, made.id, "my password in plain text")).status).toBe(400);
    expect((await v.request("POST", `/r/${made.id}/answer`, { token: null, body: { value: 5 } })).status).toBe(400);
    const atLimit = await sealAnswer(made.keys.publicKey, made.id, "x".repeat(1024));
    const over = await sealAnswer(made.keys.publicKey, made.id, "x".repeat(4096));
    expect((await answer(v, made.id, over)).status).toBe(413);
    expect((await expectStatus(v.asMaster("GET", `/requests/${made.id}`), 200)).state).toBe("open");
    // The rate counts admitted answers per address: three, then 429 with Retry-After.
    const other = await makeRequest(v);
    const another = await makeRequest(v);
    expect((await answer(v, made.id, atLimit)).status).toBe(201);
    expect((await answer(v, other.id, await sealAnswer(other.keys.publicKey, other.id, "b"))).status).toBe(201);
    expect((await answer(v, other.id, await sealAnswer(other.keys.publicKey, other.id, "c"))).status).toBe(409);
    const limited = await answer(v, another.id, await sealAnswer(another.keys.publicKey, another.id, "d"));
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await expectStatus(v.asMaster("GET", `/requests/${another.id}`), 200)).state).toBe("open");
  });

  it("counts the answer against the free tier: a full tier refuses it (402) and the request stays open", async () => {
    let limit: number | null = null;
    const v = buildTestVault({ activeLimit: () => limit });
    const made = await makeRequest(v);
    limit = 0;
    expect((await answer(v, made.id, await sealAnswer(made.keys.publicKey, made.id, "v"))).status).toBe(402);
    expect((await expectStatus(v.asMaster("GET", `/requests/${made.id}`), 200)).state).toBe("open");
    limit = null;
    expect((await answer(v, made.id, await sealAnswer(made.keys.publicKey, made.id, "v"))).status).toBe(201);
  });

  it("404s unknown ids and ids of another shape, and a deleted request takes its answer with it", async () => {
    const v = buildTestVault();
    const made = await makeRequest(v);
    const sealed = await sealAnswer(made.keys.publicKey, made.id, "v");
    expect((await answer(v, "0".repeat(64), sealed)).status).toBe(404);
    expect((await answer(v, "nope", sealed)).status).toBe(404);
    expect((await reveal(v, "0".repeat(64), made.proof)).status).toBe(404);
    expect((await answer(v, made.id, sealed)).status).toBe(201);
    const answerId = (await expectStatus(v.asMaster("GET", `/requests/${made.id}`), 200)).answer_id as string;
    expect(await expectStatus(v.asMaster("DELETE", `/requests/${made.id}`), 200)).toEqual({ deleted: true });
    expect((await v.asMaster("GET", `/requests/${made.id}`)).status).toBe(404);
    expect((await v.request("POST", `/s/${answerId}/reveal`, { token: null, body: { proof: made.proof } })).status).toBe(404);
  });

  it("reads a request made without a reveal check by its answer id only", async () => {
    const v = buildTestVault();
    const keys = await generateRequestKeys();
    const made = await expectStatus(v.asMaster("POST", "/requests", { description: "d", public_key: keys.publicKey }), 201);
    const id = made.id as string;
    expect((await answer(v, id, await sealAnswer(keys.publicKey, id, "v"))).status).toBe(201);
    // The person asked knows the request id: it spends nothing.
    expect((await reveal(v, id, undefined)).status).toBe(403);
    const answerId = (await expectStatus(v.asMaster("GET", `/requests/${id}`), 200)).answer_id as string;
    const read = await expectStatus(v.request("POST", `/s/${answerId}/reveal`, { token: null, body: {} }), 200);
    expect(await openAnswer(keys.privateKey, id, read.value as string)).toBe("v");
  });
});

describe("expiry, events and audit", () => {
  it("an open request past its TTL is gone: 404 everywhere, deleted by the sweeper with request.expired", async () => {
    const v = buildTestVault();
    const made = await makeRequest(v, { ttl_seconds: 3600 });
    const kept = await makeRequest(v, { ttl_seconds: 7200 });
    v.clock.advance(3600 * 1000);
    const sealed = await sealAnswer(made.keys.publicKey, made.id, "late");
    expect((await answer(v, made.id, sealed)).status).toBe(404);
    expect((await v.asMaster("GET", `/requests/${made.id}`)).status).toBe(404);
    expect((await expectStatus(v.asMaster("GET", "/requests"), 200)).requests).toEqual([expect.objectContaining({ id: kept.id })]);
    const sweeper = startSweeper({ secrets: v.secrets, requests: v.requests, tx: v.tx, log: createLogger("silent"), intervalMs: 0 });
    expect(await sweeper.sweepNow()).toBe(1);
    await sweeper.stop();
    expect(await v.query("SELECT id FROM requests ORDER BY id")).toEqual([{ id: kept.id }]);
    const audit = await expectStatus(v.asMaster("GET", "/audit?action=request.expired"), 200);
    expect((audit.entries as { key: string }[]).map((e) => e.key)).toEqual([made.id]);
  });

  it("audits request.created and request.answered, and queues them to a webhook without the description or key", async () => {
    const v = buildTestVault({ webhooks: { secret: "test-webhook-secret-0123456789", allowPrivate: true } });
    const hook = await expectStatus(
      v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1:9/hook", events: ["request.created", "request.answered", "request.expired"] }),
      201,
    );
    expect(hook.events).toEqual(["request.created", "request.answered", "request.expired"]);
    const made = await makeRequest(v);
    expect((await answer(v, made.id, await sealAnswer(made.keys.publicKey, made.id, "the value"))).status).toBe(201);
    const audit = await expectStatus(v.asMaster("GET", `/audit?key=${made.id}`), 200);
    expect((audit.entries as { action: string }[]).map((e) => e.action).sort()).toEqual(["request.answered", "request.created"]);
    const events = await v.query("SELECT type, body FROM webhook_events ORDER BY type");
    expect(events.map((e) => e.type)).toEqual(["request.answered", "request.created"]);
    const answeredBody = JSON.parse(events[0]?.body as string) as { data: Record<string, unknown> };
    expect(answeredBody.data).toEqual({ request_id: made.id, max_reads: 1, expires_at: expect.any(Number), answer_id: expect.stringMatching(/^[0-9a-f]{64}$/) });
    for (const e of events) {
      expect(e.body).not.toContain("billing");
      expect(e.body).not.toContain(made.keys.publicKey);
    }
    await v.webhooks.worker.stop();
  });
});

describe("org requests", () => {
  it("a principal with c makes one; the org's principals with l list it; d deletes it; who asked is the principal's name", async () => {
    const v = buildTestVault();
    const org = await createOrg(v);
    const writer = await createPrincipal(v, org, "writer", "alice");
    const reader = await createPrincipal(v, org, "reader", "bob");
    const otherOrg = await createOrg(v, "other");
    const made = await makeRequest(v, {}, writer.token, `/orgs/${org}/requests`);
    expect(made.body.asker).toBe("alice");
    const { publicKey } = await generateRequestKeys();
    expect((await v.request("POST", `/orgs/${org}/requests`, { token: reader.token, body: { description: "d", public_key: publicKey } })).status).toBe(403);
    expect((await expectStatus(v.request("GET", `/orgs/${org}/requests`, { token: reader.token }), 200)).requests).toHaveLength(1);
    expect((await v.asMaster("GET", `/orgs/${otherOrg}/requests/${made.id}`)).status).toBe(404);
    expect((await v.asMaster("GET", `/requests/${made.id}`)).status).toBe(404);
    expect((await answer(v, made.id, await sealAnswer(made.keys.publicKey, made.id, "v"))).status).toBe(201);
    const audit = await expectStatus(v.asMaster("GET", `/orgs/${org}/audit?key=${made.id}`), 200);
    expect((audit.entries as { action: string }[]).map((e) => e.action).sort()).toEqual(["request.answered", "request.created"]);
    expect((await v.request("DELETE", `/orgs/${org}/requests/${made.id}`, { token: writer.token })).status).toBe(403);
    expect((await v.asMaster("DELETE", `/orgs/${org}/requests/${made.id}`)).status).toBe(200);
  });
});

import { describe, expect, it } from "vitest";
import { AnswerTimeoutError, EnvelopeError, requestRevealProof, sealAnswer, VaultApiError, VaultClient } from "@ephemeral-vault/client";
import { buildTestVault, MASTER_KEY, rejection } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";

/**
 * The asker's side of requests (docs/requests.md) in the client library,
 * against a real in-process vault: request() makes the key pair here and
 * sends only the public half; the test answers as the answer page does
 * (sealAnswer, then POST /r/<id>/answer); awaitAnswer() polls, reads once
 * and opens the answer byte-exact.
 */

/** A client whose fetch goes to the in-process app of `vault`. */
function clientOf(vault: TestVault, token: string | undefined = MASTER_KEY): VaultClient {
  return new VaultClient({ addr: "http://vault.test", token, org: null, fetch: (url, init) => Promise.resolve(vault.app.request(url, init)) });
}

/** Answers request `id` as the answer page does: sealed in "the browser" to its public key. */
async function answer(vault: TestVault, id: string, publicKey: string, value: string): Promise<Response> {
  return vault.request("POST", `/r/${id}/answer`, { token: null, body: { value: await sealAnswer(publicKey, id, value) } });
}

const TRICKY = "line one\r\nline two 🔑\n\u0000tail — ünïcödé\n";

describe("client.request()", () => {
  it("makes the key pair here: the vault gets the public key and the reveal check, never the private key", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const made = await client.request({ description: "the billing API key", ttlSeconds: 3600, maxReads: 2 });
    expect(made.id).toMatch(/^[0-9a-f]{64}$/);
    expect(made.url).toMatch(new RegExp(`/r/${made.id}$`));
    expect(made.privateKey).toMatch(/^[A-Za-z0-9_-]{128}$/);
    expect(made.privateUrl).toBe(`${made.url}/open#${made.privateKey}`);
    expect(made.request).toMatchObject({ id: made.id, description: "the billing API key", state: "open", max_reads: 2, ttl_seconds: 3600, answered_at: null, answer_id: null });
    expect(made.expiresAt).toBe(made.request.created_at + 3600);
    expect(JSON.stringify(made.request)).not.toContain(made.privateKey);
    expect(JSON.stringify(made.request)).not.toContain((await requestRevealProof(made.privateKey)).proof);
    const got = await client.requests.get(made.id);
    expect(got.public_key).toBe(made.request.public_key);
    expect(got.state).toBe("open");
  });

  it("refuses a bad description with the API's 400", async () => {
    const err = await rejection(clientOf(buildTestVault()).request({ description: "" }));
    expect(err).toBeInstanceOf(VaultApiError);
    expect((err as VaultApiError).status).toBe(400);
  });
});

describe("client.awaitAnswer()", () => {
  it("polls until answered, then reads once and opens the value byte-exact (CR LF, emoji, NUL); the last read burns it", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const made = await client.request({ description: "tricky" });
    const waiting = client.awaitAnswer(made.id, made.privateKey, { intervalMs: 50, timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await answer(vault, made.id, made.request.public_key, TRICKY)).status).toBe(201);
    const read = await waiting;
    expect(Buffer.from(read.value, "utf8").equals(Buffer.from(TRICKY, "utf8"))).toBe(true);
    expect(read).toMatchObject({ readCount: 1, maxReads: 1, spent: true });
    expect(read.answerId).toMatch(/^[0-9a-f]{64}$/);
    // Burned: the request's answer is gone.
    const again = await rejection(client.awaitAnswer(made.id, made.privateKey, { intervalMs: 50, timeoutMs: 1_000 }));
    expect(again).toBeInstanceOf(VaultApiError);
    expect((again as VaultApiError).status).toBe(404);
  });

  it("needs no token: the private key's proof reads the answer", async () => {
    const vault = buildTestVault();
    const made = await clientOf(vault).request({ description: "tokenless", maxReads: 2 });
    await answer(vault, made.id, made.request.public_key, "value-1234");
    const anonymous = clientOf(vault, undefined);
    const first = await anonymous.awaitAnswer(made.id, made.privateKey);
    expect(first).toMatchObject({ value: "value-1234", readCount: 1, maxReads: 2, spent: false });
    expect(await anonymous.readAnswer(made.id, made.privateKey)).toMatchObject({ value: "value-1234", readCount: 2, spent: true });
  });

  it("times out with AnswerTimeoutError when nobody answers, having read nothing", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const made = await client.request({ description: "nobody answers" });
    const started = Date.now();
    const err = await rejection(client.awaitAnswer(made.id, made.privateKey, { intervalMs: 50, timeoutMs: 300 }));
    expect(err).toBeInstanceOf(AnswerTimeoutError);
    expect(err).toMatchObject({ requestId: made.id, timeoutMs: 300 });
    expect((err as Error).message).toBe("no answer within 300 ms; the request is still open (nothing was read)");
    expect(new AnswerTimeoutError(made.id, 600_000).message).toMatch(/^no answer within 10 min;/);
    expect(new AnswerTimeoutError(made.id, 7_200_000).message).toMatch(/^no answer within 2 h;/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await client.readAnswer(made.id, made.privateKey)).toBeUndefined();
    expect((await client.requests.get(made.id)).state).toBe("open");
  });

  it("a wrong private key spends nothing (EnvelopeError, readSpent false); the right one then reads", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const made = await client.request({ description: "two askers" });
    const other = await client.request({ description: "another" });
    await answer(vault, made.id, made.request.public_key, "the answer");
    const err = await rejection(client.awaitAnswer(made.id, other.privateKey, { intervalMs: 50 }));
    expect(err).toBeInstanceOf(EnvelopeError);
    expect(err).toMatchObject({ reason: "key", readSpent: false });
    expect((await client.awaitAnswer(made.id, made.privateKey)).value).toBe("the answer");
  });

  it("stops on its signal with the signal's reason", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const made = await client.request({ description: "aborted" });
    const controller = new AbortController();
    const waiting = rejection(client.awaitAnswer(made.id, made.privateKey, { intervalMs: 50, signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("stop waiting")), 100);
    expect(await waiting).toMatchObject({ message: "stop waiting" });
  });
});

describe("client.requests", () => {
  it("lists, gets and deletes; a deleted request answers 404 to awaitAnswer", async () => {
    const vault = buildTestVault();
    const client = clientOf(vault);
    const a = await client.request({ description: "first" });
    const b = await client.request({ description: "second" });
    await answer(vault, b.id, b.request.public_key, "answered value");
    const page = await client.requests.list();
    const byId = new Map(page.requests.map((r) => [r.id, r]));
    expect(byId.get(a.id)).toMatchObject({ state: "open", description: "first" });
    expect(byId.get(b.id)).toMatchObject({ state: "answered", description: "second", answer_id: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(page)).not.toContain("answered value");
    expect(await client.requests.delete(b.id)).toEqual({ deleted: true });
    expect(((await rejection(client.requests.get(b.id))) as VaultApiError).status).toBe(404);
    expect(((await rejection(client.awaitAnswer(b.id, b.privateKey))) as VaultApiError).status).toBe(404);
  });
});

import { describe, expect, it } from "vitest";
import { generateRequestKeys, requestRevealProof, sealAnswer } from "../../../packages/client/src/request-envelope.js";
import { buildTestVault, createKey } from "../../support/helpers.js";
import type { TestVault } from "../../support/helpers.js";

// The request pages' GET routes in process, on the engine under test (docs/requests.md, "The
// answer page and the private link"): what the answer page shows and never changes, the one 404
// page, the share pages' miss limiter under /r/, and VAULT_SHARE_PAGE=false.

async function makeRequest(v: TestVault, description: string, token?: string): Promise<{ id: string; publicKey: string }> {
  const keys = await generateRequestKeys();
  const { revealCheck } = await requestRevealProof(keys.privateKey);
  const res = await v.request("POST", "/requests", { token, body: { description, public_key: keys.publicKey, reveal_check: revealCheck } });
  expect(res.status).toBe(201);
  return { id: ((await res.json()) as { id: string }).id, publicKey: keys.publicKey };
}

async function auditCount(v: TestVault): Promise<number> {
  return ((await (await v.asMaster("GET", "/audit?limit=1000")).json()) as { entries: unknown[] }).entries.length;
}

describe("GET /r/<id>", () => {
  it("shows who asked and what for, escaped, with the public key for the script only; loading it changes nothing", async () => {
    const v = buildTestVault();
    const { token } = await createKey(v, { name: "ci-bot", permissions: ["write"] });
    const req = await makeRequest(v, 'The deploy key <script>alert("x")</script>\nsecond line', token);
    const before = await auditCount(v);
    for (let i = 0; i < 3; i++) {
      const res = await v.request("GET", `/r/${req.id}`, { token: null });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-robots-tag")).toMatch(/noindex/);
      expect(res.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[^']+'/);
      const html = await res.text();
      expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
      expect(html).toContain("ci-bot");
      expect(html).toContain("The deploy key &lt;script&gt;");
      expect(html).not.toContain("<script>alert");
      // The public key is in the data attribute the script reads, and nowhere else in the page.
      expect(html.split(req.publicKey).length).toBe(2);
      expect(html).toContain(`data-public-key="${req.publicKey}"`);
      expect(html).toContain("assets/request.js");
    }
    expect(await auditCount(v)).toBe(before);
    const state = (await (await v.asMaster("GET", `/requests/${req.id}`)).json()) as { state: string };
    expect(state.state).toBe("open");
  });

  it("an answered request is the same 404 page as an unknown one", async () => {
    const v = buildTestVault();
    const req = await makeRequest(v, "one answer");
    const value = await sealAnswer(req.publicKey, req.id, "the answer");
    expect((await v.request("POST", `/r/${req.id}/answer`, { token: null, body: { value } })).status).toBe(201);
    const answered = await v.request("GET", `/r/${req.id}`, { token: null });
    const unknown = await v.request("GET", `/r/${"c".repeat(64)}`, { token: null });
    expect(answered.status).toBe(404);
    expect(unknown.status).toBe(404);
    const page = await answered.text();
    expect(page).toContain("This request is not available");
    expect(await unknown.text()).toBe(page);
  });

  it("counts misses against the share pages' limiter: 429 with Retry-After under /r/ once over it, for that address only", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 3 });
    const from = { token: null, headers: { "X-Forwarded-For": "203.0.113.7" } };
    for (const path of [`/r/${"d".repeat(64)}`, "/r/not-an-id", `/r/${"d".repeat(64)}/elsewhere`]) {
      expect((await v.request("GET", path, from)).status, path).toBe(404);
    }
    const blocked = await v.request("GET", `/r/${"d".repeat(64)}`, from);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await blocked.text()).toContain("Too many attempts");
    expect((await v.request("GET", `/r/${"d".repeat(64)}/open`, from)).status).toBe(429);
    expect((await v.request("GET", `/r/${"d".repeat(64)}`, { token: null, headers: { "X-Forwarded-For": "203.0.113.8" } })).status).toBe(404);
  });
});

describe("GET /r/<id>/open", () => {
  it("looks nothing up: the same page for any well-formed id, no miss counted; a malformed id is the 404 page", async () => {
    const v = buildTestVault({ trustProxy: true, authFailLimit: 2 });
    const from = { token: null, headers: { "X-Forwarded-For": "203.0.113.20" } };
    const req = await makeRequest(v, "open me");
    const real = await v.request("GET", `/r/${req.id}/open`, from);
    expect(real.status).toBe(200);
    const page = (await real.text()).replace(/nonce="[^"]+"/, "");
    expect(page).toContain("Open the answer");
    expect(page).not.toContain("open me");
    for (let i = 0; i < 4; i++) {
      const other = await v.request("GET", `/r/${String(i).repeat(64)}/open`, from);
      expect(other.status).toBe(200);
      expect((await other.text()).replace(/nonce="[^"]+"/, "")).toBe(page);
    }
    expect((await v.request("GET", "/r/xyz/open", from)).status).toBe(404);
  });
});

describe("VAULT_SHARE_PAGE=false", () => {
  it("turns the request pages off: the API's JSON 404", async () => {
    const v = buildTestVault({ share: { page: false, anonymous: false, anonymousPerMinute: 10 } });
    for (const path of [`/r/${"e".repeat(64)}`, `/r/${"e".repeat(64)}/open`]) {
      const res = await v.request("GET", path, { token: null });
      expect(res.headers.get("content-type"), path).toMatch(/^application\/json/);
    }
  });
});

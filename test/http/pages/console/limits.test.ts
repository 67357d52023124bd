import { describe, expect, it } from "vitest";
import { createLogger } from "../../../../src/log/log.js";
import { MAX_FORM_FIELDS, MAX_SIGNIN_BYTES } from "../../../../src/http/pages/console/form.js";
import { SESSIONS_PER_TOKEN, SIGNIN_WINDOW_MS, SIGNINS_PER_WINDOW } from "../../../../src/http/pages/console/session.js";
import { buildTestVault, createKey, MASTER_KEY } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// The console's limits before it parses a body, and its sessions against one token that
// signs in again and again (docs/console.md, "Limits" and "Sessions"), in process on both engines.

const ORIGIN = "http://vault.test";

class Browser {
  cookie = "";
  constructor(readonly v: TestVault) {}
  async get(path: string): Promise<Response> {
    return this.v.app.request(path, { headers: { cookie: this.cookie } });
  }
  async post(path: string, body: BodyInit, type = "application/x-www-form-urlencoded"): Promise<Response> {
    const res = await this.v.app.request(path, { method: "POST", headers: { cookie: this.cookie, "content-type": type, origin: ORIGIN }, body });
    const set = res.headers.get("set-cookie");
    if (set !== null) this.cookie = set.split(";")[0] ?? "";
    return res;
  }
  async signIn(token: string): Promise<Response> {
    return this.post("/ui/login", new URLSearchParams({ token }).toString());
  }
  async csrf(): Promise<string> {
    return /name="csrf" value="([^"]+)"/.exec(await (await this.get("/ui/overview")).text())?.[1] ?? "";
  }
}

/** A body of `chunks` pieces that counts how many of them the server pulled. */
function countedBody(chunks: string[]): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let i = 0;
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>(
    {
      pull(ctrl) {
        const next = chunks[i];
        i += 1;
        if (next === undefined) ctrl.close();
        else ctrl.enqueue(enc.encode(next));
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => i };
}

const manyFields = (n: number) => Array.from({ length: n }, (_, k) => `f${k}=x`).join("&");

describe("console bodies", () => {
  it("a POST without a session is refused before its body is read: a 250k-field body is not parsed", async () => {
    const v = buildTestVault();
    const all = manyFields(250_000);
    const chunks: string[] = [];
    for (let at = 0; at < all.length; at += 16_384) chunks.push(all.slice(at, at + 16_384));
    const { body, pulled } = countedBody(chunks);
    const res = await v.app.request("/ui/secrets/create", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(403);
    expect(pulled()).toBeLessThan(chunks.length / 2);
  });

  it("a signed-in form over MAX_FORM_FIELDS fields answers 400 and changes nothing; without the CSRF token, 403", async () => {
    const v = buildTestVault();
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    const csrf = await b.csrf();
    const fields = `csrf=${encodeURIComponent(csrf)}&kind=keyed&key=limits%2Fx&value=v&${manyFields(MAX_FORM_FIELDS)}`;
    const res = await b.post("/ui/secrets/create", fields);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain(`at most ${MAX_FORM_FIELDS} fields`);
    expect((await b.post("/ui/secrets/create", `kind=keyed&key=limits%2Fx&value=v&${manyFields(250_000)}`)).status).toBe(403);
    expect((await v.asMaster("GET", "/secrets/limits%2Fx")).status).toBe(404);
    // Within the cap the same form works.
    expect((await b.post("/ui/secrets/create", `csrf=${encodeURIComponent(csrf)}&kind=keyed&key=limits%2Fx&value=v`)).status).toBe(303);
    expect((await v.asMaster("GET", "/secrets/limits%2Fx")).status).toBe(200);
  });

  it("a sign-in body over MAX_SIGNIN_BYTES answers 413", async () => {
    const v = buildTestVault();
    const res = await new Browser(v).signIn("x".repeat(MAX_SIGNIN_BYTES + 1));
    expect(res.status).toBe(413);
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("a malformed multipart body to a console POST answers 400 and logs no error", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger("info", {
      write(chunk: string) {
        for (const line of chunk.split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    });
    const v = buildTestVault({ log });
    const b = new Browser(v);
    await b.signIn(MASTER_KEY);
    const broken = "--XX\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\nabc\r\n--XX\r\nContent-Disp";
    expect((await b.post("/ui/secrets/create", broken, "multipart/form-data; boundary=XX")).status).toBe(400);
    expect((await b.post("/ui/login", broken, "multipart/form-data; boundary=XX")).status).toBe(400);
    expect((await b.post("/ui/logout", broken, "multipart/form-data; boundary=XX")).status).toBe(400);
    expect(lines.filter((l) => Number(l.level) >= 50)).toEqual([]);
    // Still signed in: nothing was refused as a session error.
    expect((await b.get("/ui/overview")).status).toBe(200);
  });
});

describe("console sessions against one token", () => {
  it("1000 sign-ins with one token, back to back, leave another operator's session alive", async () => {
    const v = buildTestVault();
    const other = new Browser(v);
    await other.signIn(MASTER_KEY);
    const key = await createKey(v, { permissions: ["admin"] });
    let signedIn = 0;
    for (let i = 0; i < 1000; i++) if ((await new Browser(v).signIn(key.token)).status === 303) signedIn += 1;
    expect(signedIn).toBe(SIGNINS_PER_WINDOW);
    expect((await other.get("/ui/overview")).status).toBe(200);
  }, 120_000);

  it("a token keeps at most SESSIONS_PER_TOKEN sessions, its newest: its oldest ends, no other token's", async () => {
    const v = buildTestVault();
    const other = new Browser(v);
    await other.signIn(MASTER_KEY);
    const key = await createKey(v, { permissions: ["admin"] });
    const mine: Browser[] = [];
    for (let i = 0; i < 3 * SESSIONS_PER_TOKEN; i++) {
      // Spread over time so the rate lets each through: the per-token cap is what is tested here.
      if (i > 0 && i % SIGNINS_PER_WINDOW === 0) v.clock.advance(SIGNIN_WINDOW_MS);
      const b = new Browser(v);
      expect((await b.signIn(key.token)).status).toBe(303);
      mine.push(b);
    }
    expect((await other.get("/ui/overview")).status).toBe(200);
    const alive: boolean[] = [];
    for (const b of mine) alive.push((await b.get("/ui/overview")).status === 200);
    expect(alive.filter(Boolean).length).toBe(SESSIONS_PER_TOKEN);
    expect(alive.slice(-SESSIONS_PER_TOKEN).every(Boolean)).toBe(true);
  });

  it("more than SIGNINS_PER_WINDOW sign-ins of one token within the window answer 429 with Retry-After; another token is not slowed", async () => {
    const v = buildTestVault();
    const key = await createKey(v, { permissions: ["read"] });
    for (let i = 0; i < SIGNINS_PER_WINDOW; i++) expect((await new Browser(v).signIn(key.token)).status).toBe(303);
    const refused = await new Browser(v).signIn(key.token);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await new Browser(v).signIn(MASTER_KEY)).status).toBe(303);
    v.clock.advance(SIGNIN_WINDOW_MS);
    expect((await new Browser(v).signIn(key.token)).status).toBe(303);
  });
});

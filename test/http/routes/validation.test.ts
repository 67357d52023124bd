import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildTestVault } from "../../support/helpers.js";
import type { RequestOptions, TestVault } from "../../support/helpers.js";

/**
 * Every input rule of docs/contract.md §4, §5 and §14 that applies to global
 * secrets, one row each. Every row also checks that nothing changed (the
 * secrets table is byte for byte the same) and that the error body is JSON
 * {error, message?} that does not echo the input.
 */

/** A string put into bad inputs; an error body must never contain it. */
const MARK = "ZqXj";
const HEX64 = "0123456789abcdef".repeat(4);
const MAX_VALUE_BYTES = 64;

interface Case {
  name: string;
  method: string;
  path: string;
  /** JSON body (sent as application/json) ... */
  body?: unknown;
  /** ... or raw bytes with a content type. */
  raw?: string | Uint8Array<ArrayBuffer>;
  contentType?: string;
  status: 400 | 413;
}

const post = (name: string, body: unknown, status: 400 | 413 = 400): Case => ({ name, method: "POST", path: "/secrets", body, status });
const patch = (name: string, body: unknown): Case => ({ name, method: "PATCH", path: "/secrets/existing", body, status: 400 });
const postRaw = (name: string, raw: string | Uint8Array<ArrayBuffer>, contentType: string | undefined, status: 400 | 413 = 400): Case => ({
  name,
  method: "POST",
  path: "/secrets",
  raw,
  contentType,
  status,
});
const list = (name: string, query: string): Case => ({ name, method: "GET", path: `/secrets?${query}`, status: 400 });

const value = `${MARK}-value`;

const CASES: Case[] = [
  // key: charset, length, leading "/", reserved public-id shape, empty, type (docs/contract.md §4)
  post("key with a space", { key: `a ${MARK}`, value }),
  post("key with *", { key: `a*${MARK}`, value }),
  post("key with ?", { key: `a?${MARK}`, value }),
  post("key with #", { key: `a#${MARK}`, value }),
  post("key with %", { key: `a%${MARK}`, value }),
  post("key with a backslash", { key: `a\\${MARK}`, value }),
  post("key with a non-ASCII letter", { key: `ä${MARK}`, value }),
  post("key with an emoji", { key: `🔑${MARK}`, value }),
  post("key with a newline", { key: `a\n${MARK}`, value }),
  post("key with a NUL", { key: `a\u0000${MARK}`, value }),
  post("key of 257 characters", { key: MARK + "k".repeat(253), value }),
  post("key starting with /", { key: `/${MARK}`, value }),
  post("key of only /", { key: "/", value }),
  post("key of 64 lowercase hex characters", { key: HEX64, value }),
  post("empty key", { key: "", value }),
  post("key a number", { key: 42, value }),
  post("key an array", { key: [MARK], value }),
  post("key an object", { key: { k: MARK }, value }),
  // value (docs/contract.md §6, §14)
  post("value missing", { key: MARK }),
  post("value empty", { key: MARK, value: "" }),
  post("value a number", { key: MARK, value: 12345 }),
  post("value null", { key: MARK, value: null }),
  post("value true", { key: MARK, value: true }),
  post("value an object", { key: MARK, value: { v: MARK } }),
  post("value an array", { key: MARK, value: [MARK] }),
  post("value missing, public secret", {}),
  // ttl_seconds: integer 1..315360000 (docs/contract.md §5)
  post("ttl_seconds 0", { value, ttl_seconds: 0 }),
  post("ttl_seconds -1", { value, ttl_seconds: -1 }),
  post("ttl_seconds 1.5", { value, ttl_seconds: 1.5 }),
  post('ttl_seconds "10"', { value, ttl_seconds: "10" }),
  post("ttl_seconds 315360001", { value, ttl_seconds: 315_360_001 }),
  post("ttl_seconds 1e300", { value, ttl_seconds: 1e300 }),
  post("ttl_seconds true", { value, ttl_seconds: true }),
  // max_reads: integer 1..2147483647
  post("max_reads 0", { value, max_reads: 0 }),
  post("max_reads -1", { value, max_reads: -1 }),
  post("max_reads 1.5", { value, max_reads: 1.5 }),
  post('max_reads "3"', { value, max_reads: "3" }),
  post("max_reads 2147483648", { value, max_reads: 2_147_483_648 }),
  // sizes (docs/contract.md §5)
  post(`value of ${MAX_VALUE_BYTES + 1} ASCII bytes`, { key: "big", value: MARK + "v".repeat(MAX_VALUE_BYTES - 3) }, 413),
  post(
    `value of ${MAX_VALUE_BYTES / 2 + 1} two-byte characters (${MAX_VALUE_BYTES + 2} bytes)`,
    { key: "big", value: "é".repeat(MAX_VALUE_BYTES / 2 + 1) },
    413,
  ),
  post("value of 17 four-byte characters (68 bytes, 34 UTF-16 units)", { key: "big", value: "🔑".repeat(17) }, 413),
  postRaw("body over 1 MiB", JSON.stringify({ key: "huge", value: MARK + "x".repeat(1024 * 1024) }), "application/json", 413),
  // body format (docs/contract.md §14)
  postRaw("Content-Type text/plain", JSON.stringify({ key: MARK, value }), "text/plain"),
  postRaw("Content-Type form", `key=${MARK}&value=v`, "application/x-www-form-urlencoded"),
  postRaw("no Content-Type", JSON.stringify({ key: MARK, value }), undefined),
  postRaw("Content-Type application/jsonx", JSON.stringify({ key: MARK, value }), "application/jsonx"),
  postRaw("Content-Type application/json-patch+json", JSON.stringify({ key: MARK, value }), "application/json-patch+json"),
  postRaw("unparsable JSON", `{"key": "${MARK}", "value": `, "application/json"),
  postRaw("single-quoted JSON", `{'key': '${MARK}', 'value': 'v'}`, "application/json"),
  postRaw("empty body", "", "application/json"),
  postRaw(
    "invalid UTF-8 bytes",
    new Uint8Array([...Buffer.from(`{"key":"${MARK}","value":"`), 0xff, 0xfe, 0xc3, ...Buffer.from('"}')]),
    "application/json",
  ),
  postRaw("overlong UTF-8 encoding", new Uint8Array([...Buffer.from(`{"key":"${MARK}","value":"`), 0xc0, 0xaf, ...Buffer.from('"}')]), "application/json"),
  postRaw("JSON array body", JSON.stringify([{ key: MARK, value }]), "application/json"),
  postRaw("JSON null body", "null", "application/json"),
  postRaw("JSON string body", JSON.stringify(MARK), "application/json"),
  postRaw("JSON number body", "42", "application/json"),
  postRaw("JSON true body", "true", "application/json"),
  // PATCH (docs/contract.md §6) on an existing secret
  patch("PATCH with neither field", {}),
  patch("PATCH with only unknown fields", { value: MARK, key: MARK }),
  patch("PATCH ttl_seconds 0", { ttl_seconds: 0 }),
  patch("PATCH ttl_seconds 1.5", { ttl_seconds: 1.5 }),
  patch('PATCH ttl_seconds "10"', { ttl_seconds: "10" }),
  patch("PATCH ttl_seconds 315360001", { ttl_seconds: 315_360_001 }),
  patch("PATCH max_reads 0", { max_reads: 0 }),
  patch("PATCH max_reads -1", { max_reads: -1 }),
  patch('PATCH max_reads "3"', { max_reads: "3" }),
  patch("PATCH max_reads 2147483648", { max_reads: 2_147_483_648 }),
  patch("PATCH a valid ttl with an invalid max_reads", { ttl_seconds: 60, max_reads: 0 }),
  { name: "PATCH JSON array body", method: "PATCH", path: "/secrets/existing", raw: "[]", contentType: "application/json", status: 400 },
  { name: "PATCH text/plain", method: "PATCH", path: "/secrets/existing", raw: '{"ttl_seconds":5}', contentType: "text/plain", status: 400 },
  { name: "PATCH unparsable", method: "PATCH", path: "/secrets/existing", raw: '{"ttl_seconds":', contentType: "application/json", status: 400 },
  // input comes before existence (docs/contract.md §8): a bad PATCH of a missing key is 400, not 404
  { name: "PATCH with neither field on a missing key", method: "PATCH", path: "/secrets/missing", body: {}, status: 400 },
  // path keys
  { name: "GET a path key with a space", method: "GET", path: `/secrets/a%20${MARK}`, status: 400 },
  { name: "GET a path key starting with /", method: "GET", path: `/secrets/%2F${MARK}`, status: 400 },
  { name: "GET a path key with malformed percent-encoding", method: "GET", path: `/secrets/${MARK}%ZZ`, status: 400 },
  { name: "GET a path key with an encoded NUL", method: "GET", path: `/secrets/${MARK}%00`, status: 400 },
  { name: "GET a path key with a double-encoded /", method: "GET", path: `/secrets/${MARK}%252Fb`, status: 400 },
  { name: "GET a path key of 257 characters", method: "GET", path: `/secrets/${MARK}${"k".repeat(253)}`, status: 400 },
  { name: "DELETE a path key with *", method: "DELETE", path: `/secrets/a*${MARK}`, status: 400 },
  { name: "PATCH a path key with a space", method: "PATCH", path: `/secrets/a%20${MARK}`, body: { ttl_seconds: 5 }, status: 400 },
  // list paging (docs/contract.md §5)
  list("limit 0", "limit=0"),
  list("limit 1001", "limit=1001"),
  list("limit abc", `limit=abc${MARK}`),
  list("limit -1", "limit=-1"),
  list("limit 1.5", "limit=1.5"),
  list("limit empty", "limit="),
  list("limit huge", "limit=99999999999999999999"),
  list("cursor garbage", `cursor=${MARK}`),
  list("cursor of another shape", `cursor=${Buffer.from(`c2:${MARK}`).toString("base64url")}`),
  list("cursor negative", `cursor=${Buffer.from("c1:-5").toString("base64url")}`),
  list("cursor empty", "cursor="),
];

function send(v: TestVault, c: Case): Promise<Response> {
  const options: RequestOptions = {};
  if (c.body !== undefined) options.body = c.body;
  if (c.raw !== undefined) {
    options.raw = c.raw;
    if (c.contentType !== undefined) options.contentType = c.contentType;
  }
  return v.request(c.method, c.path, options);
}

/** Every row of the secrets table, ciphertext included. */
function snapshot(v: TestVault): Promise<unknown[]> {
  return v.query("SELECT * FROM secrets ORDER BY id");
}

describe("input validation (docs/contract.md §4, §5, §14)", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const v = buildTestVault({ maxValueBytes: MAX_VALUE_BYTES });
    const setup = await v.asMaster("POST", "/secrets", { key: "existing", value: "kept", ttl_seconds: 60, max_reads: 3 });
    expect(setup.status).toBe(201);
    const before = await snapshot(v);

    const res = await send(v, c);
    expect(res.status).toBe(c.status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const text = await res.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(typeof body.error).toBe("string");
    expect((body.error as string).length).toBeGreaterThan(0);
    for (const k of Object.keys(body)) expect(["error", "message"]).toContain(k);
    expect(text).not.toContain(MARK);
    expect(text).not.toMatch(/at .*\.(ts|js):\d+/); // no stack trace

    expect(await snapshot(v)).toEqual(before);
    const listed = await v.asMaster("GET", "/secrets");
    expect(await listed.json()).toEqual({
      secrets: [{ key: "existing", created_at: expect.any(Number), expires_at: expect.any(Number), max_reads: 3, read_count: 0 }],
    });
  });
});

describe("the edges that are accepted", () => {
  const accepted: [string, Record<string, unknown>][] = [
    ["a key of 1 character", { key: "k", value: "v" }],
    ["a key of 256 characters", { key: "k".repeat(256), value: "v" }],
    ["a key with every allowed character", { key: "AZaz09._-~@:+=/x", value: "v" }],
    ["a key of 64 UPPERCASE hex characters", { key: HEX64.toUpperCase(), value: "v" }],
    ["a key of 63 lowercase hex characters", { key: HEX64.slice(1), value: "v" }],
    ["a key of 65 lowercase hex characters", { key: HEX64 + "a", value: "v" }],
    ["ttl_seconds 1", { value: "v", ttl_seconds: 1 }],
    ["ttl_seconds 315360000", { value: "v", ttl_seconds: 315_360_000 }],
    ["ttl_seconds 5.0 (an integer written with a fraction)", { value: "v", ttl_seconds: 5.0 }],
    ["max_reads 1", { value: "v", max_reads: 1 }],
    ["max_reads 2147483647", { value: "v", max_reads: 2_147_483_647 }],
    [`a value of exactly ${MAX_VALUE_BYTES} bytes`, { value: "v".repeat(MAX_VALUE_BYTES) }],
    [`${MAX_VALUE_BYTES / 2} two-byte characters (${MAX_VALUE_BYTES} bytes)`, { value: "é".repeat(MAX_VALUE_BYTES / 2) }],
    ["a value of one space", { value: " " }],
  ];
  it.each(accepted)("accepts %s", async (_name, body) => {
    const v = buildTestVault({ maxValueBytes: MAX_VALUE_BYTES });
    const res = await v.asMaster("POST", "/secrets", body);
    expect(res.status).toBe(201);
  });

  it("accepts a value at the default VAULT_MAX_VALUE_BYTES (65536) and refuses one byte more with 413", async () => {
    const v = buildTestVault({ maxValueBytes: 65_536 });
    expect((await v.asMaster("POST", "/secrets", { key: "a", value: "x".repeat(65_536) })).status).toBe(201);
    const res = await v.asMaster("POST", "/secrets", { key: "b", value: "x".repeat(65_536 - 1) + "é" });
    expect(res.status).toBe(413);
    expect(await v.asMaster("GET", "/secrets/a").then((r) => r.json())).toMatchObject({ value: "x".repeat(65_536) });
  });

  it("accepts limit 1 and 1000 and a cursor it issued", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" });
    const first = (await (await v.asMaster("GET", "/secrets?limit=1")).json()) as { next_cursor: string };
    expect(typeof first.next_cursor).toBe("string");
    expect((await v.asMaster("GET", `/secrets?limit=1000&cursor=${first.next_cursor}`)).status).toBe(200);
  });
});

describe("null in an optional field means the field is omitted (docs/contract.md §14)", () => {
  it("creates, replaces and patches with null limits as without them; null in a required field is 400", async () => {
    const v = buildTestVault();
    const created = await v.asMaster("POST", "/secrets", { key: "n/a", value: "x", ttl_seconds: null, max_reads: null });
    expect(created.status).toBe(201);
    const read = await v.asMaster("GET", "/secrets/n/a");
    expect(await read.json()).toMatchObject({ key: "n/a", expires_at: null, max_reads: null, read_count: 1 });
    const publicOne = await v.asMaster("POST", "/secrets", { key: null, value: "y" });
    expect(publicOne.status).toBe(201);
    expect(((await publicOne.json()) as { id?: string }).id).toMatch(/^[0-9a-f]{64}$/);
    const replaced = await v.asMaster("PUT", "/secrets/n/a", { value: "z", ttl_seconds: null, max_reads: 2 });
    expect(replaced.status).toBe(200);
    expect((await v.asMaster("PATCH", "/secrets/n/a", { ttl_seconds: 60, max_reads: null })).status).toBe(200);
    // PATCH with every field null gives neither: 400, as an empty PATCH.
    expect((await v.asMaster("PATCH", "/secrets/n/a", { ttl_seconds: null, max_reads: null })).status).toBe(400);
    expect((await v.asMaster("POST", "/secrets", { key: "n/b", value: null })).status).toBe(400);
    expect((await v.asMaster("POST", "/keys", { name: "k", permissions: ["read"], expires_at: null })).status).toBe(201);
  });
});

describe("property: no request body makes POST /secrets fail with a 5xx", () => {
  const field = fc.oneof(
    fc.string(),
    fc.string({ unit: fc.constantFrom(..."abcXYZ019._-~@:+=/ *%#é🔑") }),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  );
  const body = fc.oneof(
    fc.record(
      { key: field, value: field, ttl_seconds: field, max_reads: field, extra: field },
      { requiredKeys: [] },
    ),
    fc.jsonValue(),
  );

  it("answers 201, 400, 402, 409 or 413 to any JSON body", async () => {
    const v = buildTestVault({ maxValueBytes: 32 });
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const res = await v.request("POST", "/secrets", { raw: JSON.stringify(b) ?? "null", contentType: "application/json" });
        expect([201, 400, 402, 409, 413]).toContain(res.status);
        const parsed = (await res.json()) as Record<string, unknown>;
        if (res.status >= 400) expect(typeof parsed.error).toBe("string");
      }),
      { numRuns: 300 },
    );
  });

  it("answers 400 or 413, never a 5xx, to arbitrary bytes", async () => {
    const v = buildTestVault();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), async (bytes) => {
        const res = await v.request("POST", "/secrets", { raw: bytes, contentType: "application/json" });
        expect(res.status).toBeLessThan(500);
        await res.arrayBuffer();
      }),
      { numRuns: 200 },
    );
  });
});

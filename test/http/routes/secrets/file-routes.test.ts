import { createHash } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterEach, describe, expect, it } from "vitest";
import { openEnvelopeContent, parseEnvelope, prepareReveal, sealFileEnvelope } from "@ephemeral-vault/client";
import type { EnvelopeV1 } from "@ephemeral-vault/client";
import { buildTestVault, MASTER_KEY } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";

// Files in dead drops (docs/share.md, "Files"), on both engines: a public secret's file envelope
// (version 3) is bounded by VAULT_MAX_FILE_BYTES instead of VAULT_MAX_VALUE_BYTES, through the real
// Node server's body reading on loopback; everything else keeps the 1 MiB body and the value limit.

const MiB = 1024 * 1024;
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** The in-process app served on a loopback port (the Node adapter's body path, as in production). */
async function listen(v: TestVault): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: v.app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s as Server)) as Server;
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** `n` bytes cycling through all 256 values. */
function allBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = i & 0xff;
  return out;
}

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function post(base: string, path: string, body: unknown, token: string | null = MASTER_KEY): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  return fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

describe("a file in a dead drop", () => {
  it("of 10 MiB is created and revealed byte-exact; the server kept only ciphertext", async () => {
    const v = buildTestVault();
    const base = await listen(v);
    const bytes = allBytes(10 * MiB);
    const sealed = await sealFileEnvelope({ name: "report-q3.pdf", type: "application/pdf", bytes });
    const created = await post(base, "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 1 }, MASTER_KEY);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const prepared = await prepareReveal(sealed.linkKey);
    const read = await post(base, `/s/${id}/reveal`, { proof: prepared.proof }, null);
    expect(read.status).toBe(200);
    const opened = await prepared.openContent(parseEnvelope(((await read.json()) as { value: string }).value) as EnvelopeV1);
    if (typeof opened === "string") throw new Error("the file opened as text");
    expect(opened.file.name).toBe("report-q3.pdf");
    expect(opened.file.type).toBe("application/pdf");
    expect(sha256(opened.file.bytes)).toBe(sha256(bytes));
    // Burned by its one read; nothing of the name in the audit log or the events' table.
    expect((await post(base, `/s/${id}/reveal`, { proof: prepared.proof }, null)).status).toBe(404);
    const audit = JSON.stringify(await v.query("SELECT * FROM audit"));
    const events = JSON.stringify(await v.query("SELECT * FROM webhook_events"));
    for (const hay of [audit, events]) expect(hay).not.toContain("report-q3");
    expect(audit).toContain("secret.burned");
  });

  it("just over VAULT_MAX_FILE_BYTES is 413 naming the limit; at the limit it is stored; the limit is configurable", async () => {
    const v = buildTestVault({ maxFileBytes: 2 * MiB });
    const base = await listen(v);
    const token = MASTER_KEY;
    const over = await sealFileEnvelope({ name: "big.bin", type: "application/octet-stream", bytes: allBytes(2 * MiB + 1) });
    const res = await post(base, "/secrets", { value: over.envelope, reveal_check: over.revealCheck }, token);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "file too large", message: `the file may be at most ${2 * MiB} bytes` });
    const at = await sealFileEnvelope({ name: "big.bin", type: "application/octet-stream", bytes: allBytes(2 * MiB) });
    expect((await post(base, "/secrets", { value: at.envelope, reveal_check: at.revealCheck }, token)).status).toBe(201);
    // The default, 10 MiB, refuses 10 MiB and a byte.
    const d = buildTestVault();
    const dbase = await listen(d);
    const big = await sealFileEnvelope({ name: "big.bin", type: "application/octet-stream", bytes: allBytes(10 * MiB + 1) });
    const refused = await post(dbase, "/secrets", { value: big.envelope }, MASTER_KEY);
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { message: string }).message).toBe("the file may be at most 10485760 bytes");
    // Refused before anything was stored.
    expect(await d.query("SELECT id FROM secrets")).toEqual([]);
  });

  it("a smaller limit applies to a small file too; far beyond the limit the body itself is refused", async () => {
    const v = buildTestVault({ maxFileBytes: 1000 });
    const base = await listen(v);
    const token = MASTER_KEY;
    const small = await sealFileEnvelope({ name: "a.txt", type: "text/plain", bytes: allBytes(1001) });
    expect((await post(base, "/secrets", { value: small.envelope }, token)).status).toBe(413);
    const huge = await sealFileEnvelope({ name: "a.txt", type: "application/octet-stream", bytes: allBytes(2 * MiB) });
    const res = await post(base, "/secrets", { value: huge.envelope }, token);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe("request body too large");
  });

  it("the larger body is only for a public secret's file: a keyed secret, a plain value, padding all keep 1 MiB and the value limit", async () => {
    const v = buildTestVault();
    const base = await listen(v);
    const token = MASTER_KEY;
    const file = await sealFileEnvelope({ name: "f.bin", type: "application/octet-stream", bytes: allBytes(2 * MiB) });
    const cases: Array<[string, Record<string, unknown>]> = [
      ["keyed file", { key: "team/file", value: file.envelope }],
      ["plain value", { value: "x".repeat(2 * MiB) }],
      ["padding beside a small value", { value: "small", junk: "x".repeat(2 * MiB) }],
    ];
    for (const [what, body] of cases) {
      const res = await post(base, "/secrets", body, token);
      expect(res.status, what).toBe(413);
      expect(((await res.json()) as { error: string }).error, what).toBe("request body too large");
    }
    // Within 1 MiB, a plain value over VAULT_MAX_VALUE_BYTES (64 KiB) is refused as before.
    const plain = await post(base, "/secrets", { value: "x".repeat(65_537) }, token);
    expect(plain.status).toBe(413);
    expect(((await plain.json()) as { message: string }).message).toBe("the value may be at most 65536 bytes (UTF-8)");
    // The envelope's own text cannot be padded past what its file needs.
    const small = await sealFileEnvelope({ name: "s.bin", type: "application/octet-stream", bytes: allBytes(100) });
    const padded = `${small.envelope.slice(0, -1)},"pad":"${"x".repeat(2 * MiB)}"}`;
    expect((await post(base, "/secrets", { value: padded }, token)).status).toBe(413);
    expect(await v.query("SELECT id FROM secrets")).toEqual([]);
  });

  it("large bodies sent at once are handled one at a time: every file stored, and a refused one gives up its turn", async () => {
    const v = buildTestVault();
    const base = await listen(v);
    const files = await Promise.all([0, 1, 2, 3, 4].map((i) => sealFileEnvelope({ name: `f${i}.bin`, type: "application/octet-stream", bytes: allBytes(2 * MiB + i) })));
    const raw = (body: string) => fetch(`${base}/secrets`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${MASTER_KEY}` }, body });
    // Between the good ones: large bodies refused after their turn began (not JSON: 400; not a file: 413; invalid: 400).
    const answers = await Promise.all([
      post(base, "/secrets", { value: files[0]?.envelope }),
      raw(`{"value": "${"x".repeat(2 * MiB)}`),
      post(base, "/secrets", { value: files[1]?.envelope }),
      post(base, "/secrets", { value: "x".repeat(2 * MiB) }),
      post(base, "/secrets", { value: files[2]?.envelope, ttl_seconds: -1 }),
      post(base, "/secrets", { value: files[3]?.envelope }),
      post(base, "/secrets", { value: files[4]?.envelope }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([201, 400, 201, 413, 400, 201, 201]);
    // And after them all the turn is free: one more large create, and a small one.
    expect((await post(base, "/secrets", { value: files[2]?.envelope })).status).toBe(201);
    expect((await post(base, "/secrets", { value: "small" })).status).toBe(201);
    expect((await v.query("SELECT id FROM secrets")).length).toBe(6);
  });

  it("in process (the Request path), a file over 1 MiB is stored and opens", async () => {
    const v = buildTestVault();
    const bytes = allBytes(3 * MiB);
    const sealed = await sealFileEnvelope({ name: "in-process.bin", type: "application/octet-stream", bytes }, { passphrase: "a passphrase of some length" });
    const created = await v.asMaster("POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const read = await v.asMaster("GET", `/secrets/${id}`);
    const env = parseEnvelope(((await read.json()) as { value: string }).value) as EnvelopeV1;
    const opened = await openEnvelopeContent(env, sealed.linkKey, "a passphrase of some length");
    expect(typeof opened !== "string" && sha256(opened.file.bytes)).toBe(sha256(bytes));
  });
});

import { describe, expect, it } from "vitest";
import { openFileMeta, prepareReveal, sealEnvelope, sealFileEnvelope, sealFileMeta } from "@ephemeral-vault/client";
import { buildTestVault } from "../../../support/helpers.js";
import type { TestVault } from "../../../support/helpers.js";
import { expectStatus } from "../../../support/org-helpers.js";

// A file link's metadata before the reveal (docs/share.md, "The file's metadata before the reveal"),
// on both engines: POST /secrets (and POST /s) take `file_meta` only beside a file envelope without a
// key, store it as sent, embed it in the recipient page without counting a read, delete it with the
// secret, and put it in no list, receipt, audit row or event.

const FILE = { name: "report.pdf", type: "application/pdf", bytes: new Uint8Array(2200) };

function vault(): TestVault {
  return buildTestVault({ webhooks: { secret: "test-webhook-secret-0123456789", allowPrivate: true }, share: { page: true, anonymous: true, anonymousPerMinute: 10 } });
}

async function sealed() {
  const s = await sealFileEnvelope(FILE);
  const fileMeta = await sealFileMeta(s.linkKey, { name: FILE.name, type: FILE.type, size: FILE.bytes.length });
  return { ...s, fileMeta };
}

async function create(v: TestVault, extra: Record<string, unknown> = {}) {
  const s = await sealed();
  const made = await expectStatus(v.asMaster("POST", "/secrets", { value: s.envelope, reveal_check: s.revealCheck, file_meta: s.fileMeta, max_reads: 2, ...extra }), 201);
  return { ...s, id: made.id as string, receipt: made.receipt as string };
}

const stored = async (v: TestVault) => (await v.query("SELECT key, file_meta FROM file_metas")) as Array<{ key: string; file_meta: string }>;

/** The data-file-meta attribute of the recipient page, or undefined. */
async function pageMeta(v: TestVault, id: string): Promise<string | undefined> {
  const res = await v.request("GET", `/s/${id}`, { token: null });
  expect(res.status).toBe(200);
  return /data-file-meta="([^"]*)"/.exec(await res.text())?.[1];
}

describe("file_meta on POST /secrets", () => {
  it("is stored as sent and embedded in the recipient page, which counts no read; it opens with the link key", async () => {
    const v = vault();
    const { id, fileMeta, linkKey, receipt } = await create(v);
    expect(await stored(v)).toEqual([{ key: id, file_meta: fileMeta }]);
    const embedded = await pageMeta(v, id);
    expect(embedded).toBe(fileMeta);
    expect(await openFileMeta(embedded ?? "", linkKey)).toEqual({ name: "report.pdf", type: "application/pdf", size: 2200 });
    await expectStatus(v.request("GET", `/receipts/${receipt}`, { token: null }), 200);
    const list = (await (await v.asMaster("GET", "/secrets")).json()) as { secrets: Array<{ id?: string; read_count: number }> };
    expect(list.secrets.find((s) => s.id === id)?.read_count).toBe(0);
  });

  it("is in no list, receipt, audit row or webhook event", async () => {
    const v = vault();
    await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1:9/hook", events: ["*"] }), 201);
    const { id, fileMeta, receipt } = await create(v);
    const list = await (await v.asMaster("GET", "/secrets")).text();
    const one = await (await v.request("HEAD", `/s/${id}`, { token: null })).text();
    const rec = await (await v.request("GET", `/receipts/${receipt}`, { token: null })).text();
    const audit = JSON.stringify(await v.query("SELECT * FROM audit"));
    const events = JSON.stringify(await v.query("SELECT * FROM webhook_events"));
    await v.webhooks.worker.stop();
    expect(events).toContain("secret.created");
    for (const hay of [list, one, rec, audit, events]) expect(hay).not.toContain(fileMeta.slice(0, 40));
  });

  it("is refused with 400, storing nothing: with a key, beside a plain value or a text envelope, too long, not base64url", async () => {
    const v = vault();
    const s = await sealed();
    const text = await sealEnvelope("a text");
    const cases: Array<Record<string, unknown>> = [
      { key: "app/file", value: s.envelope, file_meta: s.fileMeta },
      { value: "a plain value", file_meta: s.fileMeta },
      { value: text.envelope, reveal_check: text.revealCheck, file_meta: s.fileMeta },
      { value: s.envelope, reveal_check: s.revealCheck, file_meta: "A".repeat(1401) },
      { value: s.envelope, reveal_check: s.revealCheck, file_meta: `${s.fileMeta.slice(0, 20)}+/=` },
      { value: s.envelope, reveal_check: s.revealCheck, file_meta: "" },
      { value: s.envelope, reveal_check: s.revealCheck, file_meta: 7 },
    ];
    for (const body of cases) {
      const res = await v.asMaster("POST", "/secrets", body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe("string");
    }
    expect(await stored(v)).toEqual([]);
    expect(((await (await v.asMaster("GET", "/secrets")).json()) as { secrets: unknown[] }).secrets).toEqual([]);
    // 1,400 characters is accepted.
    await expectStatus(v.asMaster("POST", "/secrets", { value: s.envelope, reveal_check: s.revealCheck, file_meta: "A".repeat(1400) }), 201);
  });

  it("goes with the secret: its last read, a delete, a link holder's destroy, its expiry", async () => {
    const v = vault();
    const burned = await create(v, { max_reads: 1 });
    const proof = (await prepareReveal(burned.linkKey)).proof;
    await expectStatus(v.request("POST", `/s/${burned.id}/reveal`, { token: null, body: { proof } }), 200);
    expect((await stored(v)).map((r) => r.key)).not.toContain(burned.id);

    const deleted = await create(v);
    expect((await v.asMaster("DELETE", `/secrets/${deleted.id}`)).status).toBe(200);
    expect((await stored(v)).map((r) => r.key)).not.toContain(deleted.id);

    const destroyed = await create(v);
    const p2 = (await prepareReveal(destroyed.linkKey)).proof;
    expect((await v.request("POST", `/s/${destroyed.id}/destroy`, { token: null, body: { proof: p2 } })).status).toBeLessThan(300);
    expect((await stored(v)).map((r) => r.key)).not.toContain(destroyed.id);

    const expiring = await create(v, { ttl_seconds: 60 });
    expect((await stored(v)).map((r) => r.key)).toEqual([expiring.id]);
    v.clock.advance(61_000);
    expect((await v.request("GET", `/s/${expiring.id}`, { token: null })).status).toBe(404);
    expect(await stored(v)).toEqual([]);
  });

  it("goes with an expiry found by POST /prune (as the sweeper's), and a prune of the global scope removes any row left without a live secret", async () => {
    const v = vault();
    const expiring = await create(v, { ttl_seconds: 60 });
    const kept = await create(v);
    await v.query(`INSERT INTO file_metas (key, file_meta) VALUES ('${"e".repeat(64)}', 'AAAA')`);
    v.clock.advance(61_000);
    expect((await v.asMaster("POST", "/prune")).status).toBe(200);
    const left = (await stored(v)).map((r) => r.key);
    expect(left).toEqual([kept.id]);
    expect(left).not.toContain(expiring.id);
  });

  it("is taken by POST /s (a link made without a token) under the same rules", async () => {
    const v = vault();
    const s = await sealed();
    const made = await expectStatus(v.request("POST", "/s", { token: null, body: { value: s.envelope, reveal_check: s.revealCheck, file_meta: s.fileMeta } }), 201);
    expect(await stored(v)).toEqual([{ key: made.id, file_meta: s.fileMeta }]);
    expect((await v.request("POST", "/s", { token: null, body: { value: "plain", file_meta: s.fileMeta } })).status).toBe(400);
  });

  it("a secret without it keeps today's page: no data-file-meta", async () => {
    const v = vault();
    const s = await sealFileEnvelope(FILE);
    const made = await expectStatus(v.asMaster("POST", "/secrets", { value: s.envelope, reveal_check: s.revealCheck }), 201);
    expect(await pageMeta(v, made.id as string)).toBeUndefined();
  });
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { generateRequestKeys, openAnswer, requestRevealProof, sealAnswer } from "../../../packages/client/src/request-envelope.js";
import { openDatabase } from "../../../src/store/sqlite/db.js";
import { buildSqliteTestVault } from "../../support/helpers.js";
import { expectStatus } from "../../support/org-helpers.js";

// docs/requests.md, "Events and audit": the private key, the proof and the
// plaintext of an answer are in no database file, nor in any audit row or
// event, after the whole flow on a real SQLite file (WAL and all).

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("keeps no private key, proof or plaintext in the database file, its WAL, the audit log or the outbox", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ev-requests-"));
  dirs.push(dir);
  const file = join(dir, "vault.db");
  const db = openDatabase(file);
  const v = buildSqliteTestVault({ db, webhooks: { secret: "test-webhook-secret-0123456789", allowPrivate: true } });
  await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1:9/hook", events: ["*"] }), 201);
  const keys = await generateRequestKeys();
  const { proof, revealCheck } = await requestRevealProof(keys.privateKey);
  const made = await expectStatus(v.asMaster("POST", "/requests", { description: "the VPN password", public_key: keys.publicKey, reveal_check: revealCheck }), 201);
  const id = made.id as string;
  const plaintext = "correct horse battery staple 🐎";
  const answered = await v.request("POST", `/r/${id}/answer`, { token: null, body: { value: await sealAnswer(keys.publicKey, id, plaintext) } });
  expect(answered.status).toBe(201);
  const read = await expectStatus(v.request("POST", `/r/${id}/reveal`, { token: null, body: { proof } }), 200);
  expect(await openAnswer(keys.privateKey, id, read.value as string)).toBe(plaintext);
  const audit = JSON.stringify(await v.query("SELECT * FROM audit"));
  const events = JSON.stringify(await v.query("SELECT * FROM webhook_events"));
  await v.webhooks.worker.stop();
  db.close();
  const secrets = [keys.privateKey, proof, plaintext, Buffer.from(keys.privateKey, "base64url").subarray(0, 32).toString("hex")];
  const files = [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1"));
  for (const s of secrets) {
    const needles = [s, Buffer.from(s, "utf8").toString("latin1")];
    for (const haystack of [...files, audit, events]) for (const needle of needles) expect(haystack.includes(needle)).toBe(false);
  }
  // The audit log has the request's rows, and the events its types: the check above looked at them.
  expect(audit).toContain("request.answered");
  expect(events).toContain("request.answered");
});

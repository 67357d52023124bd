import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { parseEnvelope, prepareReveal, sealFileEnvelope } from "../../../../packages/client/src/envelope.js";
import type { EnvelopeV1 } from "../../../../packages/client/src/envelope.js";
import { openDatabase } from "../../../../src/store/sqlite/db.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";
import { expectStatus } from "../../../support/org-helpers.js";

// docs/share.md, "Files": a file's name, type and plaintext are in no database file (nor its WAL),
// audit row or event, after a create and a reveal on a real SQLite file.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("keeps no file name, type or plaintext in the database file, its WAL, the audit log or the outbox", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ev-files-"));
  dirs.push(dir);
  const file = join(dir, "vault.db");
  const db = openDatabase(file);
  const v = buildSqliteTestVault({ db, webhooks: { secret: "test-webhook-secret-0123456789", allowPrivate: true } });
  await expectStatus(v.asMaster("POST", "/webhooks", { url: "https://127.0.0.1:9/hook", events: ["*"] }), 201);
  const name = "quarterly-payroll-zq7.xlsx";
  const type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
  const content = "EMPLOYEE SALARY TABLE zq7 ".repeat(2000);
  const sealed = await sealFileEnvelope({ name, type, bytes: new TextEncoder().encode(content) });
  const made = await expectStatus(v.asMaster("POST", "/secrets", { value: sealed.envelope, reveal_check: sealed.revealCheck, max_reads: 2 }), 201);
  const prepared = await prepareReveal(sealed.linkKey);
  const read = await expectStatus(v.request("POST", `/s/${made.id as string}/reveal`, { token: null, body: { proof: prepared.proof } }), 200);
  const opened = await prepared.openContent(parseEnvelope(read.value as string) as EnvelopeV1);
  expect(typeof opened !== "string" && opened.file.name).toBe(name);
  const audit = JSON.stringify(await v.query("SELECT * FROM audit"));
  const events = JSON.stringify(await v.query("SELECT * FROM webhook_events"));
  await v.webhooks.worker.stop();
  db.close();
  const files = [file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString("latin1"));
  for (const needle of [name, "quarterly-payroll", type, "spreadsheetml", "SALARY TABLE", sealed.linkKey, prepared.proof]) {
    for (const haystack of [...files, audit, events]) expect(haystack.includes(needle), needle).toBe(false);
  }
  expect(audit).toContain("secret.read");
  expect(events).toContain("secret.read");
});

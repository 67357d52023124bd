import { describe, expect, it } from "vitest";
import { buildSqliteTestVault } from "../../../support/helpers.js";
import type { SqliteTestVault } from "../../../support/helpers.js";

/** Makes the next batch's COMMIT fail, as a full disk would. */
function failNextCommit(v: SqliteTestVault): void {
  let armed = true;
  v.sqlite.tx.onBeforeCommit(() => {
    if (armed) {
      armed = false;
      throw new Error("disk full");
    }
  });
}

async function createOrg(v: SqliteTestVault, name: string): Promise<string> {
  const res = await v.asMaster("POST", "/orgs", { name });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/**
 * Yields microtasks (never a macrotask: the turn's batch has not run yet)
 * until the write's unit of work is queued, so a read started now is queued
 * behind it: the batch runs the write, then the read, then its COMMIT fails.
 */
async function untilWriteQueued(v: SqliteTestVault): Promise<void> {
  for (let i = 0; i < 10_000 && v.sqlite.tx.queued === 0; i++) await Promise.resolve();
  expect(v.sqlite.tx.queued).toBe(1);
}

/** Starts `write`, waits until its change sits in the open batch, then starts `read` in the same turn. */
async function readDuringWrite(v: SqliteTestVault, write: () => Promise<Response>, read: () => Promise<Response>): Promise<[Response, Response]> {
  const w = write();
  await untilWriteQueued(v);
  const r = read();
  return Promise.all([w, r]);
}

async function names(res: Response, list: string): Promise<string[]> {
  if (res.status !== 200) return [];
  return ((await res.json()) as Record<string, { name: string }[]>)[list]?.map((x) => x.name) ?? [];
}

describe("reads during an open batch whose commit fails", () => {
  it("GET /orgs while a POST /orgs sits in a batch whose commit fails does not list that org", async () => {
    const v = buildSqliteTestVault();
    failNextCommit(v);
    const [created, listed] = await readDuringWrite(
      v,
      () => v.asMaster("POST", "/orgs", { name: "phantom" }),
      () => v.asMaster("GET", "/orgs"),
    );
    expect(created.status).toBe(500);
    expect(await names(listed, "orgs")).not.toContain("phantom");
    expect(await names(await v.asMaster("GET", "/orgs"), "orgs")).toEqual([]);
  });

  it("GET principals and roles while their creation sits in a failing batch do not list them", async () => {
    const v = buildSqliteTestVault();
    const orgId = await createOrg(v, "acme");
    failNextCommit(v);
    const [principal, principals] = await readDuringWrite(
      v,
      () => v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ghost", role: "reader" }),
      () => v.asMaster("GET", `/orgs/${orgId}/principals`),
    );
    expect(principal.status).toBe(500);
    expect(await names(principals, "principals")).not.toContain("ghost");

    failNextCommit(v);
    const [role, roles] = await readDuringWrite(
      v,
      () => v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "phantom", permissions: "rl" }),
      () => v.asMaster("GET", `/orgs/${orgId}/roles`),
    );
    expect(role.status).toBe(500);
    expect(await names(roles, "roles")).not.toContain("phantom");
  });

  it("GET /orgs/:id while the org's creation sits in a failing batch is not answered 200", async () => {
    const v = buildSqliteTestVault();
    failNextCommit(v);
    const write = v.asMaster("POST", "/orgs", { name: "phantom" });
    await untilWriteQueued(v);
    // One turn: the batch runs the write (an async unit) and stays open until its COMMIT on the next turn.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(v.sqlite.tx.inBatch).toBe(true);
    const { id } = v.db.prepare("SELECT id FROM orgs WHERE name = 'phantom'").get() as { id: string };
    const read = v.asMaster("GET", `/orgs/${id}`);
    const [created, got] = await Promise.all([write, read]);
    expect(created.status).toBe(500);
    expect(got.status).not.toBe(200);
  });
});

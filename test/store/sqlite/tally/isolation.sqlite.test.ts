import { describe, expect, it } from "vitest";
import { ApiError } from "../../../../src/http/errors.js";
import { buildSqliteTestVault } from "../../../support/helpers.js";
import type { SqliteTestVault } from "../../../support/helpers.js";
import { createOrg, createPrincipal, expectStatus } from "../../../support/org-helpers.js";

/**
 * The batch of the next commit fails once (like a refused COMMIT): every
 * change in it is rolled back and none is acknowledged. With `later`, only
 * once the returned function has been called (the batch of a write that
 * follows the request's own authentication).
 * @returns the function that arms the failure.
 */
function failNextCommit(v: SqliteTestVault, later = false): () => void {
  let armed = !later;
  v.sqlite.tx.onBeforeCommit(() => {
    if (!armed) return;
    armed = false;
    throw new ApiError(503, "refused commit");
  });
  return () => {
    armed = true;
  };
}

/**
 * Replaces `target[name]` so that right after it has written (inside the
 * batch, before its COMMIT) `read` is sent; resolves with that read's answer.
 * @param onWrite called as the write starts (to arm a failing commit).
 */
function readWhileUncommitted<T extends object, K extends keyof T>(
  target: T,
  name: K,
  read: (result: unknown) => Promise<Response>,
  onWrite: () => void = () => {},
): Promise<Response> {
  const original = target[name] as unknown as (...args: unknown[]) => unknown;
  return new Promise((resolve, reject) => {
    const wrapped = (...args: unknown[]) => {
      onWrite();
      const result = original.apply(target, args);
      target[name] = original as unknown as T[K];
      // The write's unit of work settles within the turn; the read starts
      // right after it, while its batch is still open.
      Promise.resolve(result).then(
        (written) => read(written).then(resolve, reject),
        reject,
      );
      return result;
    };
    target[name] = wrapped as unknown as T[K];
  });
}

/** The read either failed with the batch or did not see its rows. */
async function expectNotSeen(res: Response, written: string): Promise<void> {
  const text = await res.text();
  if (res.status === 200) expect(text).not.toContain(written);
  else expect(res.status).toBe(503);
}

describe("reads never answer with rows of a batch that has not committed", () => {
  it("GET /orgs and GET /orgs/:org_id do not show an org whose create failed to commit", async () => {
    const v = buildSqliteTestVault();
    failNextCommit(v);
    let one: Promise<Response> | undefined;
    const list = readWhileUncommitted(v.orgs.orgs, "create", (org) => {
      one = v.asMaster("GET", `/orgs/${(org as { id: string }).id}`);
      return v.asMaster("GET", "/orgs");
    });
    await expectStatus(v.asMaster("POST", "/orgs", { name: "ghost" }), 503);
    await expectNotSeen(await list, "ghost");
    expect(one).toBeDefined();
    await expectNotSeen(await (one as Promise<Response>), "ghost");
    expect(await expectStatus(v.asMaster("GET", "/orgs"), 200)).toEqual({ orgs: [] });
  });

  it("GET principals and roles do not show a principal or a role whose create failed to commit", async () => {
    const v = buildSqliteTestVault();
    const orgId = await createOrg(v);
    failNextCommit(v);
    const principals = readWhileUncommitted(v.orgs.principals, "create", () => v.asMaster("GET", `/orgs/${orgId}/principals`));
    const roles = readWhileUncommitted(v.orgs.roles, "create", () => v.asMaster("GET", `/orgs/${orgId}/roles`));
    const [p, r] = await Promise.all([
      v.asMaster("POST", `/orgs/${orgId}/principals`, { name: "ghost-principal", role: "reader" }),
      v.asMaster("POST", `/orgs/${orgId}/roles`, { name: "ghost-role", permissions: "r" }),
    ]);
    expect([p.status, r.status]).toEqual([503, 503]);
    await expectNotSeen(await principals, "ghost-principal");
    await expectNotSeen(await roles, "ghost-role");
  });

  it("GET /me does not show metadata whose change failed to commit", async () => {
    const v = buildSqliteTestVault();
    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    const arm = failNextCommit(v, true);
    const me = readWhileUncommitted(v.orgs.principals, "update", () => v.request("GET", "/me", { token: p.token }), arm);
    await expectStatus(v.request("PATCH", "/me", { token: p.token, body: { metadata: { ghost: "uncommitted" } } }), 503);
    await expectNotSeen(await me, "uncommitted");
    expect((await expectStatus(v.request("GET", "/me", { token: p.token }), 200)).metadata).toEqual({});
  });

  it("a scoped key or a principal key whose create failed to commit authenticates nothing, not even in its own batch", async () => {
    const v = buildSqliteTestVault();
    failNextCommit(v);
    const scoped = readWhileUncommitted(v.scopedKeys, "create", (created) =>
      v.request("GET", "/secrets", { token: (created as { token: string }).token }),
    );
    await expectStatus(v.asMaster("POST", "/keys", { name: "ghost", permissions: ["read"] }), 503);
    expect([401, 503]).toContain((await scoped).status);

    const orgId = await createOrg(v);
    const p = await createPrincipal(v, orgId, "reader");
    failNextCommit(v);
    const principal = readWhileUncommitted(v.orgs.principalKeys, "create", (created) =>
      v.request("GET", "/me", { token: (created as { token: string }).token }),
    );
    await expectStatus(v.asMaster("POST", `/orgs/${orgId}/principals/${p.id}/keys`, { name: "ghost" }), 503);
    expect([401, 503]).toContain((await principal).status);
  });
});

import { createServer } from "node:http";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeFailure, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, VaultApiError, VaultClient } from "@ephemeral-vault/client";
import { cleanupTemp, E2E_MASTER_KEY, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { rejection } from "../support/helpers.js";

/**
 * describeFailure() is the client package's (docs/client.md "Errors"): the
 * one line and exit code the CLI prints and the MCP server answers, for
 * real failures of a client against a vault started here, a server that is
 * not a vault, and an address where nothing listens.
 */

let vault: VaultProcess;
let master: VaultClient;
let notVault: Server;
let notVaultAddr: string;

beforeAll(async () => {
  vault = await startVault(tempDir());
  master = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY, org: null });
  notVault = createServer((_req, res) => res.writeHead(404, { "content-type": "text/html" }).end("<html>nothing here</html>"));
  await new Promise<void>((ok) => notVault.listen(0, "127.0.0.1", ok));
  const address = notVault.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  notVaultAddr = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await new Promise<void>((ok) => notVault.close(() => ok()));
  await killChildren();
  cleanupTemp();
});

describe("describeFailure (from the client package)", () => {
  it("a refusal is `<error> (<status>)` and exit 1", async () => {
    const err = await rejection(master.get("failure/missing"));
    expect(err).toBeInstanceOf(VaultApiError);
    const { error, status } = err as VaultApiError;
    expect(describeFailure(err)).toEqual({ message: `${error} (${status})`, code: EXIT_REFUSED });
    expect(EXIT_REFUSED).toBe(1);
  });

  it("a 403 on listing names the permission and what to do instead, in the CLI's words or the MCP tools'", async () => {
    const { token } = await master.keys.create({ name: "reader", permissions: ["read"] });
    const err = await rejection(new VaultClient({ addr: vault.url, token, org: null }).list());
    expect(err).toMatchObject({ status: 403 });
    const cli = describeFailure(err);
    expect(cli?.code).toBe(EXIT_REFUSED);
    expect(cli?.message).toMatch(/\(403\).*; listing secrets needs a key with the admin permission: name the secrets instead: get KEY, or run --env NAME=KEY$/);
    expect(describeFailure(err, "mcp")?.message).toMatch(/; listing secrets needs a key with the admin permission: read each secret by its key with get_secret$/);
    expect(cli?.message).not.toContain(token);
  });

  it("a server that is not a vault, an address where nothing answers and a refused key are exit 2", async () => {
    const other = await rejection(new VaultClient({ addr: notVaultAddr, token: "t" }).get("k"));
    expect(describeFailure(other)).toEqual({ message: `the server at ${notVaultAddr} is not an ephemeral-vault (HTTP 404, text/html)`, code: EXIT_UNREACHABLE });
    const closed = `${notVaultAddr.replace(/:\d+$/, "")}:1`;
    const unreachable = await rejection(new VaultClient({ addr: closed, token: "t" }).get("k"));
    expect(describeFailure(unreachable)).toMatchObject({ message: expect.stringMatching(/^vault not reachable at http:\/\/127\.0\.0\.1:1 \(/), code: 2 });
    const refused = await rejection(master.get("../keys/x"));
    expect(describeFailure(refused)).toEqual({ message: (refused as Error).message, code: EXIT_USAGE });
    expect([EXIT_UNREACHABLE, EXIT_USAGE]).toEqual([2, 2]);
  });

  it("any other error is not described (null): the caller rethrows it", () => {
    expect(describeFailure(new TypeError("a bug"))).toBeNull();
    expect(describeFailure("text")).toBeNull();
  });
});

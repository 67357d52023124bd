import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { cleanupTemp, cliAgainst, killChildren, runCommand, startVault, tempDir } from "../support/e2e-helpers.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { closeMcpClients, connectMcp } from "../support/mcp-client.js";
import { itSqlite } from "../support/test-engine.js";
import { fingerprintOf, httpsRequest, makeCa, makeLeaf, writePair } from "../support/tls-helpers.js";
import type { TestCertificate } from "../support/webhook-receiver.js";

// The built command with HTTPS from files (docs/deploy.md "The executable alone, on HTTPS", docs/cli.md
// "Connecting"), on both engines: SIGHUP reloads the pair, and the client
// commands trust the vault's CA through VAULT_CACERT, or refuse it clearly.

let authority: TestCertificate;
let first: TestCertificate;
let second: TestCertificate;

beforeAll(async () => {
  authority = await makeCa();
  [first, second] = await Promise.all([makeLeaf(authority), makeLeaf(authority)]);
});

afterEach(async () => {
  await closeMcpClients();
  await killChildren();
});
afterAll(cleanupTemp);

describe("serve with VAULT_TLS_CERT and VAULT_TLS_KEY", () => {
  it("reloads the pair on SIGHUP and keeps running", async () => {
    const certs = tempDir("ev-tls-certs-");
    const files = writePair(certs, first);
    const vault = await startVault(tempDir(), { env: { VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key, VAULT_LOG_LEVEL: "info" } });
    expect(vault.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = [authority.cert];
    expect((await httpsRequest(`${vault.url}/health`, ca)).fingerprint).toBe(fingerprintOf(first));
    // Sent before the directory watch's debounce ends: the reload that serves it is SIGHUP's.
    writePair(certs, second);
    vault.child.kill("SIGHUP");
    await expect.poll(() => vault.stdout(), { timeout: 5000 }).toMatch(/"reason":"SIGHUP".*"msg":"TLS certificate reloaded"/);
    const after = await httpsRequest(`${vault.url}/health`, ca);
    expect(after.status).toBe(200);
    expect(after.fingerprint).toBe(fingerprintOf(second));
    expect(vault.child.exitCode).toBeNull();
    expect(await vault.stop()).toEqual({ code: 0, signal: null });
  });

  it("is reached by the CLI with VAULT_CACERT, refused with one clear line without it", async () => {
    const certs = tempDir("ev-tls-certs-");
    const files = writePair(certs, first);
    const caFile = join(certs, "ca.pem");
    writeFileSync(caFile, authority.cert);
    const vault = await startVault(tempDir(), { env: { VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key } });

    const put = cliAgainst(vault, ["put", "tls/one", "over-https"], { VAULT_CACERT: caFile });
    expect(put.code).toBe(0);
    const got = cliAgainst(vault, ["get", "tls/one"], { VAULT_CACERT: caFile });
    expect([got.code, got.stdout.trim()]).toEqual([0, "over-https"]);

    const refused = cliAgainst(vault, ["get", "tls/one"]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toBe(
      `ephemeral-vault: vault not reachable at ${vault.url} (its TLS certificate is not trusted: UNABLE_TO_VERIFY_LEAF_SIGNATURE); to trust the CA that signed it, set VAULT_CACERT to its PEM file\n`,
    );
    const missing = cliAgainst(vault, ["get", "tls/one"], { VAULT_CACERT: join(certs, "nope.pem") });
    expect([missing.code, missing.stderr]).toEqual([2, `ephemeral-vault: VAULT_CACERT ${join(certs, "nope.pem")} cannot be read (ENOENT)\n`]);
  });

  itSqlite("records its https:// address in the data dir, which a local CLI uses with VAULT_CACERT", async () => {
    const certs = tempDir("ev-tls-certs-");
    const files = writePair(certs, first);
    const caFile = join(certs, "ca.pem");
    writeFileSync(caFile, authority.cert);
    const dataDir = tempDir();
    const vault = await startVault(dataDir, { env: { VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key } });
    expect(readFileSync(join(dataDir, "address"), "utf8").trim()).toBe(vault.url);
    const local = cliAgainst(vault, ["ls", "--json"], { VAULT_ADDR: undefined, VAULT_DATA_DIR: dataDir, VAULT_CACERT: caFile });
    expect([local.code, local.stderr]).toEqual([0, ""]);
    expect(JSON.parse(local.stdout)).toEqual([]);
  });

  it("is reached by the MCP server with VAULT_CACERT; without it a tool answers the same clear refusal", async () => {
    const certs = tempDir("ev-tls-certs-");
    const files = writePair(certs, first);
    const caFile = join(certs, "ca.pem");
    writeFileSync(caFile, authority.cert);
    const vault = await startVault(tempDir(), { env: { VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: files.key } });
    const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

    const trusted = await connectMcp({ addr: vault.url, env: { VAULT_CACERT: caFile } });
    const put = await trusted.client.callTool({ name: "put_secret", arguments: { key: "mcp/tls", value: "via mcp" } });
    expect(put.isError).toBeFalsy();
    const listed = await trusted.client.callTool({ name: "list_secrets", arguments: { prefix: "mcp/" } });
    expect(listed.isError).toBeFalsy();
    expect(text(listed)).toContain("mcp/tls");

    const untrusted = await connectMcp({ addr: vault.url });
    const refused = await untrusted.client.callTool({ name: "list_secrets", arguments: { prefix: "mcp/" } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/its TLS certificate is not trusted: UNABLE_TO_VERIFY_LEAF_SIGNATURE\); to trust the CA that signed it, set VAULT_CACERT/);
  });

  it("refuses to start, exit 2 and one line, with a key that is not the certificate's or a file it cannot read", async () => {
    const certs = tempDir("ev-tls-certs-");
    const files = writePair(certs, first);
    const otherKey = join(certs, "other.pem");
    writeFileSync(otherKey, second.key);
    const dataDir = tempDir();
    const mismatch = runCommand(["serve", "--port", "0"], { VAULT_DATA_DIR: dataDir, VAULT_TLS_CERT: files.cert, VAULT_TLS_KEY: otherKey });
    expect([mismatch.code, mismatch.stderr.trim().split("\n").at(-1)]).toEqual([2, "ephemeral-vault: VAULT_TLS_KEY is not the private key of the certificate in VAULT_TLS_CERT"]);
    expect(mismatch.stderr).not.toContain("PRIVATE KEY");
    const unreadable = runCommand(["serve", "--port", "0"], { VAULT_DATA_DIR: dataDir, VAULT_TLS_CERT: join(certs, "none.pem"), VAULT_TLS_KEY: files.key });
    expect([unreadable.code, unreadable.stderr.trim().split("\n").at(-1)]).toEqual([2, `ephemeral-vault: VAULT_TLS_CERT ${join(certs, "none.pem")} cannot be read (ENOENT)`]);
    const half = runCommand(["serve", "--port", "0"], { VAULT_DATA_DIR: dataDir, VAULT_TLS_CERT: files.cert });
    expect(half.code).toBe(2);
    expect(half.stderr).toContain("VAULT_TLS_KEY must be set with VAULT_TLS_CERT");
  });
});

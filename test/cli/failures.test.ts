import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import type { Server as HttpServer } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { Server as TcpServer, Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { VaultClient, VaultConnectionError, VaultProtocolError } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";
import { itSqlite } from "../support/helpers.js";

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI to completion without blocking this process (the test's
 * own servers must keep answering); VAULT_ADDR/VAULT_TOKEN from `vault` unless overridden.
 */
function cli(args: string[], options: { vault?: VaultProcess; env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliResult> {
  const env = childEnv({
    ...(options.vault === undefined ? {} : { VAULT_ADDR: options.vault.url, VAULT_TOKEN: E2E_MASTER_KEY }),
    ...options.env,
  });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function listen<S extends HttpServer | TcpServer>(server: S): Promise<string> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

function close(server: HttpServer | TcpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

describe("the API's explanation reaches the command line", () => {
  let vault: VaultProcess;
  beforeAll(async () => {
    vault = await startVault(tempDir(), { env: { VAULT_MAX_VALUE_BYTES: "16", VAULT_AUTH_FAIL_LIMIT: "2", VAULT_TRUST_PROXY: "true" } });
  });
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("413 says how large a value may be", async () => {
    const put = await cli(["put", "ux/big", "x".repeat(40)], { vault });
    expect(put.code).toBe(1);
    expect(put.stderr).toContain("ephemeral-vault: value too large (413): the value may be at most 16 bytes");
  });

  it("410 says how to reactivate a sealed org secret", async () => {
    const org = (await (await vault.request("POST", "/orgs", { name: "ux-org" })).json()) as { id: string };
    const principal = (await (await vault.request("POST", `/orgs/${org.id}/principals`, { name: "bot", role: "writer" })).json()) as { id: string };
    const key = (await (await vault.request("POST", `/orgs/${org.id}/principals/${principal.id}/keys`, { name: "k" })).json()) as { key: string };
    const env = { VAULT_TOKEN: key.key, VAULT_ORG: org.id };
    expect((await cli(["put", "ux/sealed", "v", "--reads", "1", "--seal"], { vault, env })).code).toBe(0);
    expect((await cli(["get", "ux/sealed"], { vault, env })).stdout).toBe("v");
    const sealed = await cli(["get", "ux/sealed"], { vault, env });
    expect(sealed.code).toBe(1);
    expect(sealed.stderr).toMatch(/^ephemeral-vault: secret sealed \(410\): [^\n]*PATCH max_reads to reactivate/);
  });

  it("403 on ls and run --prefix with a read key says listing needs admin and what to use instead", async () => {
    const key = (await (await vault.request("POST", "/keys", { name: "reader", permissions: ["read"] })).json()) as { token: string };
    const env = { VAULT_TOKEN: key.token };
    const ls = await cli(["ls"], { vault, env });
    expect(ls.code).toBe(1);
    expect(ls.stderr).toMatch(/\(403\)[^\n]*needs a key with the admin permission[^\n]*get KEY, or run --env NAME=KEY/);
    const run = await cli(["run", "--prefix", "ux", "--only", "X", "--", process.execPath, "-e", ""], { vault, env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/\(403\)[^\n]*needs a key with the admin permission[^\n]*run --env NAME=KEY/);
  });

  it("429 says when to retry (Retry-After)", async () => {
    // A loopback peer is exempt from the failed-authentication limit; a trusted
    // proxy in front (this forwarder, adding X-Forwarded-For) makes the address count.
    const proxy = createHttpServer((req, res) => {
      const headers: Record<string, string> = { "x-forwarded-for": "203.0.113.9" };
      if (typeof req.headers.authorization === "string") headers.authorization = req.headers.authorization;
      fetch(vault.url + (req.url ?? "/"), { method: req.method, headers }).then(async (answer) => {
        const out: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (name !== "content-length" && name !== "transfer-encoding") out[name] = value;
        });
        res.writeHead(answer.status, out).end(Buffer.from(await answer.arrayBuffer()));
      }, () => res.writeHead(502).end());
    });
    const addr = await listen(proxy);
    try {
      const env = { VAULT_ADDR: addr, VAULT_TOKEN: "wrong-token-0123456789abcdef" };
      for (let i = 0; i < 3; i++) await cli(["get", "ux/any"], { env });
      const limited = await cli(["get", "ux/any"], { env });
      expect(limited.code).toBe(1);
      expect(limited.stderr).toMatch(/^ephemeral-vault: too many failed authentications \(429\): [^\n]+; retry after \d+ s\n$/);
    } finally {
      await close(proxy);
    }
  });
});

describe("the free-tier limit", () => {
  afterAll(async () => {
    await killChildren();
    cleanupTemp();
  });

  it("402 says how to lift the limit", async () => {
    const vault = await startVault(tempDir());
    for (let i = 0; i < 100; i++) expect((await vault.request("POST", "/secrets", { key: `fill/${i}`, value: "v" })).status).toBe(201);
    const put = await cli(["put", "fill/over", "v"], { vault });
    expect(put.code).toBe(1);
    expect(put.stderr).toMatch(/\(402\): [^\n]*VAULT_LICENSE_KEY/);
  });
});

describe("a server that is not a vault", () => {
  let server: HttpServer;
  let addr: string;
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      if (req.url?.startsWith("/secrets/page")) {
        res.writeHead(200, { "content-type": "text/html" }).end("<html>hello</html>");
        return;
      }
      res.writeHead(404, { "content-type": "text/html" }).end("<html>File not found</html>");
    });
    addr = await listen(server);
  });
  afterAll(() => close(server));

  it("an error page is named as not an ephemeral-vault (exit 2), not as the vault's refusal", async () => {
    const got = await cli(["get", "foo"], { env: { VAULT_ADDR: addr, VAULT_TOKEN: "t" } });
    expect(got.code).toBe(2);
    expect(got.stderr).toBe(`ephemeral-vault: the server at ${addr} is not an ephemeral-vault (HTTP 404, text/html)\n`);
  });

  it("a success that is not the API's JSON is refused the same way", async () => {
    const got = await cli(["get", "page"], { env: { VAULT_ADDR: addr, VAULT_TOKEN: "t" } });
    expect(got.code).toBe(2);
    expect(got.stderr).toBe(`ephemeral-vault: the server at ${addr} is not an ephemeral-vault (HTTP 200, text/html)\n`);
    await expect(new VaultClient({ addr, token: "t" }).get("page")).rejects.toBeInstanceOf(VaultProtocolError);
  });
});

describe("a server that accepts and never answers", () => {
  let server: TcpServer;
  let addr: string;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    addr = await listen(server);
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await close(server);
  });

  it("the CLI gives up after --timeout with a connection error naming the address and the time (exit 2)", async () => {
    const got = await cli(["get", "foo", "--timeout", "1"], { env: { VAULT_ADDR: addr, VAULT_TOKEN: "t" } });
    expect(got.code).toBe(2);
    expect(got.stderr).toBe(`ephemeral-vault: vault not reachable at ${addr} (no answer within 1 s)\n`);
  });

  it("a share link at such a server gives up after --timeout too", async () => {
    const link = `${addr}/s/${"ab".repeat(32)}#${"A".repeat(43)}`;
    const got = await cli(["get", link, "--timeout", "1"], { env: { VAULT_TOKEN: undefined } });
    expect(got.code).toBe(2);
    expect(got.stderr).toBe(`ephemeral-vault: vault not reachable at ${addr} (no answer within 1 s)\n`);
  });

  it("the client rejects with VaultConnectionError after timeoutMs, and with the signal's reason when aborted", async () => {
    const client = new VaultClient({ addr, token: "t", timeoutMs: 300 });
    const err = await client.get("foo").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VaultConnectionError);
    expect((err as VaultConnectionError).timeoutMs).toBe(300);
    expect((err as Error).message).toBe(`vault not reachable at ${addr} (no answer within 300 ms)`);

    const controller = new AbortController();
    const reason = new Error("stopped by the caller");
    const pending = new VaultClient({ addr, token: "t", timeoutMs: 0, signal: controller.signal }).get("foo");
    setTimeout(() => controller.abort(reason), 100);
    await expect(pending).rejects.toBe(reason);
  });
});

describe("a local vault on another port", () => {
  afterEach(killChildren);
  afterAll(cleanupTemp);

  // A PostgreSQL node has no data dir to write its address to.
  itSqlite("records its address in the data dir (0600); a client there finds it; a clean stop removes it", async () => {
    const home = tempDir();
    const dataDir = join(home, ".vault");
    mkdirSync(dataDir);
    const vault = await startVault(dataDir, { env: { VAULT_MASTER_KEY: undefined } });
    const file = join(dataDir, "address");
    expect(readFileSync(file, "utf8")).toBe(`${vault.url}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No VAULT_ADDR and no token: the address and the master key both come from ./.vault.
    expect((await cli(["put", "local/port", "v1"], { cwd: home })).code).toBe(0);
    expect(await cli(["get", "local/port"], { cwd: home })).toEqual({ code: 0, stdout: "v1", stderr: "" });
    expect((await vault.stop("SIGTERM")).code).toBe(0);
    expect(existsSync(file)).toBe(false);
  });

  itSqlite("a stale address file gives a prompt error naming the file, not a hang", async () => {
    const home = tempDir();
    const dataDir = join(home, ".vault");
    mkdirSync(dataDir);
    const probe = createTcpServer();
    const addr = await listen(probe);
    await close(probe); // nothing listens there now
    writeFileSync(join(dataDir, "address"), `${addr}\n`, { mode: 0o600 });
    const got = await cli(["ls"], { cwd: home, env: { VAULT_TOKEN: "t" } });
    expect(got.code).toBe(2);
    expect(got.stderr).toContain(`vault not reachable at ${addr}`);
    expect(got.stderr).toContain(join(dataDir, "address"));
  });

  it("a file naming another host is ignored, like the master key", async () => {
    const { resolveConnection } = await import("../../src/cli/client/connection.js");
    const home = tempDir();
    mkdirSync(join(home, ".vault"));
    writeFileSync(join(home, ".vault", "address"), "http://192.0.2.7:9000\n");
    expect(resolveConnection({}, { VAULT_TOKEN: "t" }, home).addr).toBe("http://127.0.0.1:8484");
    writeFileSync(join(home, ".vault", "address"), "http://127.0.0.1:19003\n");
    expect(resolveConnection({}, { VAULT_TOKEN: "t" }, home).addr).toBe("http://127.0.0.1:19003");
    expect(resolveConnection({}, { VAULT_TOKEN: "t", VAULT_ADDR: "http://127.0.0.1:1" }, home).addr).toBe("http://127.0.0.1:1");
  });
});

import { createPublicKey } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS, flagName } from "../../src/config.js";
import { generateLicenseKeyPair } from "../../src/crypto/license.js";
import { HEX_KEY, HEX_KEY_2, config, configError } from "../support/config-helpers.js";

describe("loadConfig defaults", () => {
  it("has the documented defaults (docs/contract.md §3)", () => {
    expect(config()).toMatchObject({
      port: 8484,
      host: "127.0.0.1",
      dataDir: "./.vault",
      masterKey: undefined,
      encryptionKey: undefined,
      previousEncryptionKeys: [],
      publicUrl: "http://127.0.0.1:8484",
      licenseKey: undefined,
      licensePublicKey: undefined,
      webhookSecret: undefined,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 512,
      maxConnectionsPerIp: 64,
      webhooksPerScope: 25,
      webhookFailingAfter: 5,
      webhookScopeConcurrency: 4,
      webhookAllowPrivate: false,
      webhookOrgGlobalSignature: true,
      webhookTimeoutMs: 10_000,
      webhookMaxAttempts: 8,
      webhookRetryBaseMs: 1000,
      sweepIntervalMs: 1000,
      maxValueBytes: 65_536,
      trustProxy: false,
      logLevel: "info",
      authFailLimit: 20,
      databasePreparedStatements: true,
    });
  });

  it("turns PostgreSQL's prepared statements off with VAULT_DATABASE_PREPARED_STATEMENTS=false or its flag (a transaction-mode pooler)", () => {
    expect(config([], { VAULT_DATABASE_PREPARED_STATEMENTS: "false" }).databasePreparedStatements).toBe(false);
    expect(config([], { VAULT_DATABASE_PREPARED_STATEMENTS: "" }).databasePreparedStatements).toBe(true);
    expect(config(["--database-prepared-statements=false"]).databasePreparedStatements).toBe(false);
    expect(config(["--database-prepared-statements", "no"], { VAULT_DATABASE_PREPARED_STATEMENTS: "true" }).databasePreparedStatements).toBe(false);
    expect(configError([], { VAULT_DATABASE_PREPARED_STATEMENTS: "sometimes" }).message).toContain("VAULT_DATABASE_PREPARED_STATEMENTS");
  });

  it("reads VAULT_MAX_CONNECTIONS_PER_IP and its flag; 0 turns the per-address cap off", () => {
    expect(config([], { VAULT_MAX_CONNECTIONS_PER_IP: "8" }).maxConnectionsPerIp).toBe(8);
    expect(config([], { VAULT_MAX_CONNECTIONS_PER_IP: "0" }).maxConnectionsPerIp).toBe(0);
    expect(config(["--max-connections-per-ip", "3"], { VAULT_MAX_CONNECTIONS_PER_IP: "8" }).maxConnectionsPerIp).toBe(3);
  });

  it("serves the share pages by default, anonymous creation off; VAULT_SHARE_* and their flags change that", () => {
    expect(config([], {})).toMatchObject({ sharePage: true, shareAnonymous: false, shareAnonymousPerMinute: 10 });
    expect(config([], { VAULT_SHARE_PAGE: "false", VAULT_SHARE_ANONYMOUS: "true", VAULT_SHARE_ANONYMOUS_PER_MINUTE: "3" })).toMatchObject({
      sharePage: false,
      shareAnonymous: true,
      shareAnonymousPerMinute: 3,
    });
    expect(config(["--share-anonymous"], {}).shareAnonymous).toBe(true);
    expect(() => config([], { VAULT_SHARE_ANONYMOUS_PER_MINUTE: "0" })).toThrow(/VAULT_SHARE_ANONYMOUS_PER_MINUTE/);
    expect(() => config([], { VAULT_SHARE_PAGE: "maybe" })).toThrow(/VAULT_SHARE_PAGE/);
  });

  it("treats an empty environment variable as unset", () => {
    expect(config([], { VAULT_PORT: "", VAULT_LOG_LEVEL: "", VAULT_MASTER_KEY: "" })).toMatchObject({
      port: 8484,
      logLevel: "info",
      masterKey: undefined,
    });
  });

  it("writes nothing: a data dir that does not exist is not created", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "ev-config-")), "not-yet");
    try {
      expect(config([], { VAULT_DATA_DIR: dir }).dataDir).toBe(dir);
      expect(existsSync(dir)).toBe(false);
    } finally {
      rmSync(join(dir, ".."), { recursive: true, force: true });
    }
  });
});

describe("loadConfig from the environment and flags", () => {
  it("reads every setting from the environment", () => {
    const { publicKeyBase64 } = generateLicenseKeyPair();
    const c = config([], {
      VAULT_PORT: "9000",
      VAULT_HOST: "0.0.0.0",
      VAULT_DATA_DIR: "/var/lib/vault",
      VAULT_MASTER_KEY: "master-key-of-enough-length",
      VAULT_ENCRYPTION_KEY: HEX_KEY,
      VAULT_PREVIOUS_ENCRYPTION_KEYS: `${HEX_KEY_2}, ${Buffer.alloc(32, 3).toString("base64")}`,
      VAULT_PUBLIC_URL: "https://vault.example.com/",
      VAULT_LICENSE_KEY: "payload.signature",
      VAULT_LICENSE_PUBLIC_KEY: publicKeyBase64,
      VAULT_WEBHOOK_SECRET: "webhook-secret-0123456789",
      VAULT_WEBHOOK_ALLOW_PRIVATE: "1",
      VAULT_WEBHOOK_TIMEOUT_MS: "2500",
      VAULT_WEBHOOK_MAX_ATTEMPTS: "3",
      VAULT_WEBHOOK_RETRY_BASE_MS: "10",
      VAULT_SWEEP_INTERVAL_MS: "0",
      VAULT_MAX_VALUE_BYTES: "1024",
      VAULT_TRUST_PROXY: "true",
      VAULT_LOG_LEVEL: "WARN",
    });
    expect(c).toMatchObject({
      port: 9000,
      host: "0.0.0.0",
      dataDir: "/var/lib/vault",
      masterKey: "master-key-of-enough-length",
      publicUrl: "https://vault.example.com",
      licenseKey: "payload.signature",
      licensePublicKey: publicKeyBase64,
      webhookSecret: "webhook-secret-0123456789",
      webhookAllowPrivate: true,
      webhookTimeoutMs: 2500,
      webhookMaxAttempts: 3,
      webhookRetryBaseMs: 10,
      sweepIntervalMs: 0,
      maxValueBytes: 1024,
      trustProxy: true,
      logLevel: "warn",
    });
    expect(c.encryptionKey?.equals(Buffer.from(HEX_KEY, "hex"))).toBe(true);
    expect(c.previousEncryptionKeys.map((k) => k.toString("hex"))).toEqual([HEX_KEY_2, "03".repeat(32)]);
  });

  it("reads every setting from a flag named after it, and the flag wins over the environment", () => {
    const c = config(
      ["--port", "9001", "--host", "::1", "--data-dir", "/flag/dir", "--master-key", "flag-master-key-123456", "--log-level", "debug", "--trust-proxy", "--sweep-interval-ms", "250"],
      { VAULT_PORT: "9000", VAULT_HOST: "0.0.0.0", VAULT_DATA_DIR: "/env/dir", VAULT_MASTER_KEY: "env-master-key-1234567", VAULT_LOG_LEVEL: "error", VAULT_SWEEP_INTERVAL_MS: "5" },
    );
    expect(c).toMatchObject({
      port: 9001,
      host: "::1",
      dataDir: "/flag/dir",
      masterKey: "flag-master-key-123456",
      logLevel: "debug",
      trustProxy: true,
      sweepIntervalMs: 250,
      publicUrl: "http://[::1]:9001",
    });
  });

  it("accepts --flag=value", () => {
    expect(config(["--port=1234", "--data-dir=:memory:"])).toMatchObject({ port: 1234, dataDir: ":memory:" });
  });

  it("takes a boolean flag bare or with the values of its variable (--flag, --flag=false, --flag true)", () => {
    expect(config(["--trust-proxy"]).trustProxy).toBe(true);
    expect(config(["--trust-proxy", "--port", "1"])).toMatchObject({ trustProxy: true, port: 1 });
    expect(config(["--trust-proxy=false"], { VAULT_TRUST_PROXY: "true" }).trustProxy).toBe(false);
    expect(config(["--webhook-allow-private", "1"]).webhookAllowPrivate).toBe(true);
    expect(config(["--webhook-allow-private", "no", "--port", "2"])).toMatchObject({ webhookAllowPrivate: false, port: 2 });
    expect(config([], { VAULT_WEBHOOK_ORG_GLOBAL_SIGNATURE: "false" }).webhookOrgGlobalSignature).toBe(false);
    expect(configError(["--trust-proxy", "maybe"], {}).message).toContain("VAULT_TRUST_PROXY");
  });

  it("refuses a VAULT_HOST that is neither an IP address nor a host name", () => {
    for (const host of ["999.1.1.1", "1.2.3", "a b", "-bad.example", "::zz"]) {
      expect(configError([], { VAULT_HOST: host }).message).toContain("VAULT_HOST");
    }
    for (const host of ["0.0.0.0", "::", "localhost", "vault.internal.example"]) {
      expect(config([], { VAULT_HOST: host }).host).toBe(host);
    }
  });

  it("has one flag per setting, named after its first variable", () => {
    expect(flagName(SETTINGS.dataDir)).toBe("data-dir");
    expect(flagName(SETTINGS.port)).toBe("port");
    expect(flagName(SETTINGS.masterKey)).toBe("master-key");
    expect(flagName(SETTINGS.previousEncryptionKeys)).toBe("previous-encryption-keys");
    for (const setting of Object.values(SETTINGS)) {
      expect(setting.env[0]).toMatch(/^VAULT_[A-Z_]+$/);
      expect(flagName(setting)).toMatch(/^[a-z]+(-[a-z]+)*$/);
    }
  });

  it("takes PORT as an alias of VAULT_PORT, VAULT_PORT winning", () => {
    expect(config([], { PORT: "7000" }).port).toBe(7000);
    expect(config([], { PORT: "7000", VAULT_PORT: "7001" }).port).toBe(7001);
    expect(config(["--port", "7002"], { PORT: "7000" }).port).toBe(7002);
  });

  it("takes VAULT_API_KEY as an alias of VAULT_MASTER_KEY, VAULT_MASTER_KEY winning", () => {
    expect(config([], { VAULT_API_KEY: "api-key-alias-0123456" }).masterKey).toBe("api-key-alias-0123456");
    expect(config([], { VAULT_API_KEY: "api-key-alias-0123456", VAULT_MASTER_KEY: "master-key-0123456789" }).masterKey).toBe(
      "master-key-0123456789",
    );
  });

  it("accepts port 0 (any free port) and builds the default public url from host and port", () => {
    expect(config(["--port", "0"]).port).toBe(0);
    expect(config([], { VAULT_HOST: "10.0.0.5", VAULT_PORT: "80" }).publicUrl).toBe("http://10.0.0.5:80");
  });

  it("accepts the encryption key as hex or base64 of 32 bytes", () => {
    const base64 = Buffer.from(HEX_KEY, "hex").toString("base64");
    expect(config([], { VAULT_ENCRYPTION_KEY: base64 }).encryptionKey?.toString("hex")).toBe(HEX_KEY);
  });

  it("accepts a PEM license public key", () => {
    const { privateKeyPem } = generateLicenseKeyPair();
    const publicPem = createPublicKey(privateKeyPem).export({ type: "spki", format: "pem" }).toString();
    expect(config([], { VAULT_LICENSE_PUBLIC_KEY: publicPem }).licensePublicKey).toBe(publicPem.trim());
  });

  it.each([
    ["true", true],
    ["TRUE", true],
    ["1", true],
    ["yes", true],
    ["false", false],
    ["0", false],
    ["no", false],
  ])("reads the boolean %s as %s", (text, expected) => {
    expect(config([], { VAULT_TRUST_PROXY: text }).trustProxy).toBe(expected);
    expect(config([], { VAULT_WEBHOOK_ALLOW_PRIVATE: text }).webhookAllowPrivate).toBe(expected);
  });
});

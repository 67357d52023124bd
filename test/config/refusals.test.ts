import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { prepareDataDir } from "../../src/runtime/keyfiles.js";
import { HEX_KEY, configError, parseServeFlags } from "../support/config-helpers.js";

// Bad settings: each refused with one line naming its variable, and never
// echoing a key; and the data directory's checks (docs/configuration.md).

/** Single sign-on settings that start, for the cases that leave one of them out. */
const OIDC_BASE = { VAULT_OIDC_ISSUER: "https://login.example.com", VAULT_OIDC_CLIENT_ID: "vault", VAULT_OIDC_ORG: "org_people", VAULT_OIDC_ROLE_MAP: "devs=writer" };

describe("loadConfig refuses a bad setting with a ConfigError naming it", () => {
  const cases: [string, string[], Record<string, string>, string][] = [
    ["port abc", [], { VAULT_PORT: "abc" }, "VAULT_PORT"],
    ["port 70000", [], { VAULT_PORT: "70000" }, "VAULT_PORT"],
    ["port -1", [], { VAULT_PORT: "-1" }, "VAULT_PORT"],
    ["port 80.5", [], { VAULT_PORT: "80.5" }, "VAULT_PORT"],
    ["port via PORT", [], { PORT: "http" }, "VAULT_PORT"],
    ["port via flag", ["--port", "x"], {}, "VAULT_PORT"],
    ["master key of 15 characters", [], { VAULT_MASTER_KEY: "a".repeat(15) }, "VAULT_MASTER_KEY"],
    ["master key via the alias, too short", [], { VAULT_API_KEY: "short" }, "VAULT_MASTER_KEY"],
    ["master key with a space", [], { VAULT_MASTER_KEY: "has a space in it ok" }, "VAULT_MASTER_KEY"],
    ["encryption key too short", [], { VAULT_ENCRYPTION_KEY: "abcd" }, "VAULT_ENCRYPTION_KEY"],
    ["encryption key of 31 bytes", [], { VAULT_ENCRYPTION_KEY: "ab".repeat(31) }, "VAULT_ENCRYPTION_KEY"],
    ["encryption key not hex nor base64", [], { VAULT_ENCRYPTION_KEY: "z".repeat(64) }, "VAULT_ENCRYPTION_KEY"],
    ["a previous key malformed", [], { VAULT_PREVIOUS_ENCRYPTION_KEYS: `${HEX_KEY},nope` }, "VAULT_PREVIOUS_ENCRYPTION_KEYS"],
    ["log level loud", [], { VAULT_LOG_LEVEL: "loud" }, "VAULT_LOG_LEVEL"],
    ["log level trace", [], { VAULT_LOG_LEVEL: "trace" }, "VAULT_LOG_LEVEL"],
    ["public url not a url", [], { VAULT_PUBLIC_URL: "not a url" }, "VAULT_PUBLIC_URL"],
    ["public url relative", [], { VAULT_PUBLIC_URL: "/secrets" }, "VAULT_PUBLIC_URL"],
    ["oidc issuer on plain http off loopback", [], { VAULT_OIDC_ISSUER: "http://login.example.com" }, "VAULT_OIDC_ISSUER"],
    ["oidc issuer not a url", [], { VAULT_OIDC_ISSUER: "login" }, "VAULT_OIDC_ISSUER"],
    ["oidc issuer without a client id", [], { ...OIDC_BASE, VAULT_OIDC_CLIENT_ID: "" }, "VAULT_OIDC_CLIENT_ID"],
    ["oidc issuer without an org", [], { ...OIDC_BASE, VAULT_OIDC_ORG: "" }, "VAULT_OIDC_ORG"],
    ["oidc issuer without a role map", [], { ...OIDC_BASE, VAULT_OIDC_ROLE_MAP: "" }, "VAULT_OIDC_ROLE_MAP"],
    ["oidc role map not pairs", [], { VAULT_OIDC_ROLE_MAP: "devs" }, "VAULT_OIDC_ROLE_MAP"],
    ["oidc org not an org id", [], { VAULT_OIDC_ORG: "people" }, "VAULT_OIDC_ORG"],
    ["oidc scopes without openid", [], { VAULT_OIDC_SCOPES: "profile email" }, "VAULT_OIDC_SCOPES"],
    ["oidc key ttl not a duration", [], { VAULT_OIDC_KEY_TTL: "12 hours" }, "VAULT_OIDC_KEY_TTL"],
    ["oidc secret and its file", [], { VAULT_OIDC_CLIENT_SECRET: "s", VAULT_OIDC_CLIENT_SECRET_FILE: "/x" }, "VAULT_OIDC_CLIENT_SECRET"],
    ["public url ftp", [], { VAULT_PUBLIC_URL: "ftp://vault.example.com" }, "VAULT_PUBLIC_URL"],
    ["license public key garbage", [], { VAULT_LICENSE_PUBLIC_KEY: "garbage" }, "VAULT_LICENSE_PUBLIC_KEY"],
    ["license public key of 31 bytes", [], { VAULT_LICENSE_PUBLIC_KEY: Buffer.alloc(31, 1).toString("base64") }, "VAULT_LICENSE_PUBLIC_KEY"],
    ["license public key a broken PEM", [], { VAULT_LICENSE_PUBLIC_KEY: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----" }, "VAULT_LICENSE_PUBLIC_KEY"],
    ["trust proxy maybe", [], { VAULT_TRUST_PROXY: "maybe" }, "VAULT_TRUST_PROXY"],
    ["allow private perhaps", [], { VAULT_WEBHOOK_ALLOW_PRIVATE: "perhaps" }, "VAULT_WEBHOOK_ALLOW_PRIVATE"],
    ["webhook secret too short", [], { VAULT_WEBHOOK_SECRET: "short" }, "VAULT_WEBHOOK_SECRET"],
    ["webhook timeout 0", [], { VAULT_WEBHOOK_TIMEOUT_MS: "0" }, "VAULT_WEBHOOK_TIMEOUT_MS"],
    ["webhook attempts abc", [], { VAULT_WEBHOOK_MAX_ATTEMPTS: "abc" }, "VAULT_WEBHOOK_MAX_ATTEMPTS"],
    ["retry base -1", [], { VAULT_WEBHOOK_RETRY_BASE_MS: "-1" }, "VAULT_WEBHOOK_RETRY_BASE_MS"],
    ["sweep interval 1.5", [], { VAULT_SWEEP_INTERVAL_MS: "1.5" }, "VAULT_SWEEP_INTERVAL_MS"],
    ["max value bytes 0", [], { VAULT_MAX_VALUE_BYTES: "0" }, "VAULT_MAX_VALUE_BYTES"],
    ["headers timeout 0", [], { VAULT_HEADERS_TIMEOUT_MS: "0" }, "VAULT_HEADERS_TIMEOUT_MS"],
    ["headers timeout above the request timeout", [], { VAULT_HEADERS_TIMEOUT_MS: "40000" }, "VAULT_HEADERS_TIMEOUT_MS"],
    ["request timeout abc", [], { VAULT_REQUEST_TIMEOUT_MS: "abc" }, "VAULT_REQUEST_TIMEOUT_MS"],
    ["keep-alive timeout 5.5", [], { VAULT_KEEP_ALIVE_TIMEOUT_MS: "5.5" }, "VAULT_KEEP_ALIVE_TIMEOUT_MS"],
    ["max connections 0", [], { VAULT_MAX_CONNECTIONS: "0" }, "VAULT_MAX_CONNECTIONS"],
    ["max connections per ip -1", [], { VAULT_MAX_CONNECTIONS_PER_IP: "-1" }, "VAULT_MAX_CONNECTIONS_PER_IP"],
    ["webhooks per scope 0", [], { VAULT_WEBHOOKS_PER_SCOPE: "0" }, "VAULT_WEBHOOKS_PER_SCOPE"],
    ["webhook failing after -2", [], { VAULT_WEBHOOK_FAILING_AFTER: "-2" }, "VAULT_WEBHOOK_FAILING_AFTER"],
    ["webhook scope concurrency 0", [], { VAULT_WEBHOOK_SCOPE_CONCURRENCY: "0" }, "VAULT_WEBHOOK_SCOPE_CONCURRENCY"],
    ["webhook scope concurrency above the 8 slots", [], { VAULT_WEBHOOK_SCOPE_CONCURRENCY: "9" }, "VAULT_WEBHOOK_SCOPE_CONCURRENCY"],
    ["max value bytes over the body limit", [], { VAULT_MAX_VALUE_BYTES: "2000000" }, "VAULT_MAX_VALUE_BYTES"],
  ];

  it.each(cases)("%s", (_name, args, env, setting) => {
    const err = configError(args, env);
    expect(err.message).toContain(setting);
    expect(err.message).not.toContain("\n");
  });

  it("does not echo a bad master key or encryption key back", () => {
    expect(configError([], { VAULT_MASTER_KEY: "tooShortKey" }).message).not.toContain("tooShortKey");
    expect(configError([], { VAULT_ENCRYPTION_KEY: "secretish-but-bad" }).message).not.toContain("secretish");
  });

  it("refuses an unknown flag and a flag without its value", () => {
    expect(() => parseServeFlags(["--no-such-flag"])).toThrow(ConfigError);
    expect(() => parseServeFlags(["--port"])).toThrow(ConfigError);
    expect(() => parseServeFlags(["positional"])).toThrow(ConfigError);
  });
});

describe("the data directory", () => {
  it("is created with every missing parent, mode 0700", () => {
    const root = mkdtempSync(join(tmpdir(), "ev-datadir-"));
    try {
      const dir = join(root, "a", "b", "data");
      prepareDataDir(dir);
      expect(statSync(dir).isDirectory()).toBe(true);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(join(root, "a")).mode & 0o777).toBe(0o700);
      prepareDataDir(dir); // existing: fine
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("refuses a path that is a file or lies under one, naming VAULT_DATA_DIR", () => {
    const root = mkdtempSync(join(tmpdir(), "ev-datadir-"));
    try {
      const file = join(root, "file");
      writeFileSync(file, "x");
      for (const dir of [file, join(file, "sub")]) {
        expect(() => prepareDataDir(dir)).toThrow(ConfigError);
        expect(() => prepareDataDir(dir)).toThrow(/VAULT_DATA_DIR/);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { resolveConnection } from "../../src/cli/client/connection.js";
import { parseDuration, parseReads } from "../../src/cli/duration.js";
import { envNameFor, parseEnvMapping, parseNameList, prefixPath } from "../../src/inject/env-names.js";
import { childEnvironment, planRun } from "../../src/inject/run-plan.js";
import { formatTable } from "../../src/cli/table.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

describe("DURATION", () => {
  it.each([
    ["30", 30],
    ["30s", 30],
    ["15m", 900],
    ["2h", 7200],
    ["7d", 604_800],
  ])("%s is %i seconds", (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(["", "0", "-5", "1.5h", "10w", "h", "3 days", "1e3"])("refuses %j as a usage error", (text) => {
    expect(() => parseDuration(text)).toThrow(ConfigError);
  });

  it("read counts are positive whole numbers", () => {
    expect(parseReads("3")).toBe(3);
    for (const bad of ["0", "-1", "two", "1.5"]) expect(() => parseReads(bad)).toThrow(ConfigError);
  });
});

describe("run's environment names", () => {
  it("strips the prefix and one slash, uppercases, replaces the rest with _", () => {
    expect(envNameFor("prod/db_url", "prod")).toBe("DB_URL");
    expect(envNameFor("prod/db_url", "prod/")).toBe("DB_URL");
    expect(envNameFor("prod/api-key.v2", "prod")).toBe("API_KEY_V2");
    expect(envNameFor("prod/", "prod/")).toBeNull();
  });

  it("matches whole path segments: prod is prod/, never prod2/ or production/", () => {
    expect(prefixPath("prod")).toBe("prod/");
    expect(prefixPath("prod//")).toBe("prod/");
    expect(() => prefixPath("/")).toThrow(ConfigError);
    expect(envNameFor("prod2/other", "prod")).toBeNull();
    expect(envNameFor("production/other", "prod")).toBeNull();
    expect(envNameFor("prod/sub/x", "prod")).toBe("SUB_X");
  });

  it("parses --only lists: commas or spaces, repeatable; refuses what is no variable name", () => {
    expect(parseNameList([])).toBeUndefined();
    expect([...(parseNameList(["DB_URL,API_KEY", "TOKEN  X"]) ?? [])]).toEqual(["DB_URL", "API_KEY", "TOKEN", "X"]);
    for (const bad of [",", "1ABC", "A-B", "A=B"]) expect(() => parseNameList([bad]), bad).toThrow(ConfigError);
  });

  it("plans: only --only names from the prefix, never one already set; --env wins and sets any name; a clash is a usage error", () => {
    const plan = planRun(["p/db_url", "p/path", "p/1x", "p/user", "p/api", "p/makeflags"], "p", [{ name: "API", key: "other/api" }, { name: "PATH", key: "ops/path" }], { USER: "me" }, new Set(["DB_URL", "USER", "API", "GONE"]));
    expect([...plan.names]).toEqual([["DB_URL", "p/db_url"], ["API", "other/api"], ["PATH", "ops/path"]]);
    expect(plan.skipped.map((s) => s.key)).toEqual(["p/path", "p/1x", "p/makeflags", "p/user"]);
    expect(plan.missing).toEqual(["GONE"]);
    expect(() => planRun(["p/a-b", "p/a_b"], "p", [], {}, new Set(["A_B"]))).toThrow(/p\/a-b and p\/a_b both map to A_B/);
    expect(() => planRun(["p/db_url", "p/makeflags"], "p", [], {})).toThrow(/add --only DB_URL,MAKEFLAGS/);
    expect(planRun(["p/db_url"], "p", [{ name: "A", key: "x" }], {}).names).toEqual(new Map([["A", "x"]]));
    expect(() => planRun([], undefined, [{ name: "A", key: "x" }, { name: "A", key: "y" }], {})).toThrow(ConfigError);
  });

  it("the child's environment drops the runner's connection unless kept; a named value always wins", () => {
    const env = { VAULT_TOKEN: "t", VAULT_ADDR: "a", VAULT_ORG: "o", HOME: "/h" };
    expect(childEnvironment(env, new Map([["X", "1"]]), false)).toEqual({ HOME: "/h", X: "1" });
    expect(childEnvironment(env, new Map(), true)).toEqual(env);
    expect(childEnvironment(env, new Map([["VAULT_TOKEN", "explicit"]]), false)).toEqual({ HOME: "/h", VAULT_TOKEN: "explicit" });
  });

  it("parses NAME=KEY and refuses bad names", () => {
    expect(parseEnvMapping("DATABASE_URL=prod/db=1")).toEqual({ name: "DATABASE_URL", key: "prod/db=1" });
    for (const bad of ["NOEQUALS", "=key", "1ABC=key", "A-B=key", "NAME="]) expect(() => parseEnvMapping(bad)).toThrow(ConfigError);
  });
});

describe("connection", () => {
  it("a flag wins over the environment, which wins over the default", () => {
    const env = { VAULT_ADDR: "http://vault.internal:9000/", VAULT_TOKEN: "env-token", VAULT_ORG: "org-env" };
    expect(resolveConnection({}, env, "/nonexistent")).toEqual({ addr: "http://vault.internal:9000", token: "env-token", org: "org-env", timeoutMs: 30_000 });
    expect(resolveConnection({ addr: "https://v.example", token: "flag-token", org: "org-flag" }, env, "/nonexistent")).toEqual({
      addr: "https://v.example",
      token: "flag-token",
      org: "org-flag",
      timeoutMs: 30_000,
    });
    expect(resolveConnection({ token: "t" }, {}, "/nonexistent")).toEqual({ addr: "http://127.0.0.1:8484", token: "t", org: undefined, timeoutMs: 30_000 });
    expect(resolveConnection({ token: "t", timeout: "2m" }, {}, "/nonexistent").timeoutMs).toBe(120_000);
    expect(resolveConnection({ token: "t", timeout: "0" }, {}, "/nonexistent").timeoutMs).toBe(0);
  });

  it("without a token uses a readable master.key, else names VAULT_TOKEN", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-conn-"));
    try {
      expect(() => resolveConnection({}, {}, dir)).toThrow(/VAULT_TOKEN/);
      mkdirSync(join(dir, ".vault"));
      writeFileSync(join(dir, ".vault", "master.key"), "local-master-key-123456\n");
      expect(resolveConnection({}, {}, dir).token).toBe("local-master-key-123456");
      const other = join(dir, "data");
      mkdirSync(other);
      writeFileSync(join(other, "master.key"), "data-dir-master-key-1234");
      expect(resolveConnection({}, { VAULT_DATA_DIR: other }, dir).token).toBe("data-dir-master-key-1234");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("sends the local master.key only to a loopback address, never to another host", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-conn-"));
    try {
      mkdirSync(join(dir, ".vault"));
      writeFileSync(join(dir, ".vault", "master.key"), "local-master-key-123456\n");
      for (const addr of ["http://127.0.0.1:8484", "http://localhost:9", "http://127.3.2.1", "http://[::1]:8484"]) {
        expect(resolveConnection({ addr }, {}, dir).token, addr).toBe("local-master-key-123456");
      }
      for (const addr of ["http://other-host:8484", "https://vault.example.com", "http://10.0.0.5", "http://127.0.0.1.evil.example", "http://app.localhost", "http://evil.localhost.:8484", "http://localhost.:8484"]) {
        expect(() => resolveConnection({ addr }, {}, dir), addr).toThrow(/only for a vault on this machine/);
        expect(() => resolveConnection({}, { VAULT_ADDR: addr }, dir), addr).toThrow(ConfigError);
      }
      expect(resolveConnection({ addr: "https://vault.example.com" }, { VAULT_TOKEN: "explicit-token" }, dir).token).toBe("explicit-token");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--token-file and VAULT_TOKEN_FILE read the token from a file (flags first, then the environment)", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-conn-"));
    try {
      const file = join(dir, "token");
      writeFileSync(file, "file-token-0123456789\n");
      expect(resolveConnection({ tokenFile: file }, { VAULT_TOKEN: "env" }, dir).token).toBe("file-token-0123456789");
      expect(resolveConnection({}, { VAULT_TOKEN_FILE: file }, dir).token).toBe("file-token-0123456789");
      expect(resolveConnection({}, { VAULT_TOKEN: "env", VAULT_TOKEN_FILE: file }, dir).token).toBe("env");
      expect(resolveConnection({ token: "flag", tokenFile: file }, {}, dir).token).toBe("flag");
      expect(() => resolveConnection({ tokenFile: join(dir, "missing") }, {}, dir)).toThrow(/--token-file: cannot read/);
      writeFileSync(file, "\n");
      expect(() => resolveConnection({ tokenFile: file }, {}, dir)).toThrow(/is empty/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an address that is not http(s)", () => {
    expect(() => resolveConnection({ addr: "ftp://x", token: "t" }, {}, "/")).toThrow(ConfigError);
    expect(() => resolveConnection({ addr: "not a url", token: "t" }, {}, "/")).toThrow(ConfigError);
  });
});

describe("the ls table", () => {
  it("shows key, reads and expiry, never a value", () => {
    const table = formatTable([
      { key: "prod/db", read_count: 1, max_reads: 3, expires_at: 1_900_000_000, created_at: 1, value: "LEAK" },
      { id: "ab".repeat(32), read_count: 0, created_at: 1 },
    ]);
    expect(table.split("\n")[0]).toMatch(/^KEY\s+READS\s+EXPIRES$/);
    expect(table).toContain("prod/db");
    expect(table).toContain("1/3");
    expect(table).toContain("2030-03-17T17:46:40Z");
    expect(table).toContain("0/-");
    expect(table).toContain("never");
    expect(table).not.toContain("LEAK");
    expect(formatTable([])).toBe("no secrets\n");
  });
});

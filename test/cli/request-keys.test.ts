import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configDir, keyFilePath, loadRequestKey, removeRequestKey, requestId, saveRequestKey } from "../../src/cli/client/request-keys.js";
import type { RequestKeyFile } from "../../src/cli/client/request-keys.js";
import { ConfigError } from "../../src/config.js";
import { cleanupTemp, tempDir } from "../support/e2e-helpers.js";

/** Where the command line keeps a request's private key (docs/cli.md "request"): one file per request, 0600 in a 0700 directory. */

afterAll(cleanupTemp);

const ID = "ab".repeat(32);

function entry(id = ID): RequestKeyFile {
  return { v: 1, id, url: `http://vault.test/r/${id}`, addr: "http://127.0.0.1:8484", org: null, private_key: "k".repeat(128), description: "d", created_at: 1, expires_at: 2 };
}

describe("the config directory", () => {
  it("is VAULT_CONFIG_DIR, else $XDG_CONFIG_HOME/ephemeral-vault, else ~/.config/ephemeral-vault", () => {
    expect(configDir({ VAULT_CONFIG_DIR: "/etc/ev", XDG_CONFIG_HOME: "/x" }, "/home/u")).toBe("/etc/ev");
    expect(configDir({ XDG_CONFIG_HOME: "/x" }, "/home/u")).toBe("/x/ephemeral-vault");
    expect(configDir({ XDG_CONFIG_HOME: "relative" }, "/home/u")).toBe("/home/u/.config/ephemeral-vault");
    expect(configDir({}, "/home/u")).toBe("/home/u/.config/ephemeral-vault");
    expect(() => configDir({ VAULT_CONFIG_DIR: "rel/dir" }, "/home/u")).toThrow(ConfigError);
  });
});

describe("request key files", () => {
  it("are written mode 0600 in a 0700 requests directory, read back, and removed", () => {
    const env = { VAULT_CONFIG_DIR: join(tempDir(), "cfg") };
    const file = saveRequestKey(entry(), env);
    expect(file).toBe(join(env.VAULT_CONFIG_DIR, "requests", `${ID}.json`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(env.VAULT_CONFIG_DIR, "requests")).mode & 0o777).toBe(0o700);
    expect(loadRequestKey(ID, env)).toEqual(entry());
    // Never overwritten.
    expect(() => saveRequestKey(entry(), env)).toThrow(/EEXIST/);
    expect(removeRequestKey(ID, env)).toBe(true);
    expect(removeRequestKey(ID, env)).toBe(false);
    expect(loadRequestKey(ID, env)).toBeUndefined();
  });

  it("tighten an existing requests directory to 0700", () => {
    const cfg = join(tempDir(), "cfg");
    mkdirSync(join(cfg, "requests"), { recursive: true, mode: 0o755 });
    saveRequestKey(entry(), { VAULT_CONFIG_DIR: cfg });
    expect(statSync(join(cfg, "requests")).mode & 0o777).toBe(0o700);
  });

  it("refuse an id that is not 64 lowercase hex (it would name another path), and a file that is not a key file", () => {
    const env = { VAULT_CONFIG_DIR: join(tempDir(), "cfg") };
    for (const bad of ["../x", "AB".repeat(32), "ab", `${ID}/..`]) expect(() => requestId(bad), bad).toThrow(ConfigError);
    expect(() => keyFilePath("../../etc/passwd", env)).toThrow(ConfigError);
    saveRequestKey(entry(), env);
    writeFileSync(keyFilePath(ID, env), "not json");
    expect(() => loadRequestKey(ID, env)).toThrow(/not a request key file/);
    expect(readFileSync(keyFilePath(ID, env), "utf8")).toBe("not json");
  });
});

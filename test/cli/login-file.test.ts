import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveAddress, resolveConnection } from "../../src/cli/client/connection.js";
import { loginFilePath, readLogin, removeLogin, writeLogin } from "../../src/cli/client/login-file.js";

// The login `ephemeral-vault login` stores (docs/cli.md, "Signing in"; docs/sso.md, "The CLI"):
// where it lives, its modes, and when later commands use it.

const dirs: string[] = [];
const configDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "ev-login-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const LOGIN = { url: "https://vault.example.com", token: `vpk_${"a".repeat(43)}`, key_id: "pk_x", org_id: "org_people", valid_before: 2_000_000_000 };

describe("the stored login", () => {
  it("lives in $XDG_CONFIG_HOME/ephemeral-vault (else ~/.config), the file 0600 in a 0700 directory", () => {
    const xdg = configDir();
    expect(loginFilePath({ XDG_CONFIG_HOME: xdg })).toBe(join(xdg, "ephemeral-vault", "login.json"));
    expect(loginFilePath({ XDG_CONFIG_HOME: "relative", HOME: "/home/ann" })).toBe("/home/ann/.config/ephemeral-vault/login.json");
    const file = writeLogin(LOGIN, { XDG_CONFIG_HOME: xdg });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(xdg, "ephemeral-vault")).mode & 0o777).toBe(0o700);
    expect(readLogin({ XDG_CONFIG_HOME: xdg })).toEqual(LOGIN);
    removeLogin({ XDG_CONFIG_HOME: xdg });
    expect(readLogin({ XDG_CONFIG_HOME: xdg })).toBeUndefined();
  });

  it("is the token and org of commands for its own vault when none is given; a given token, or another address, wins", () => {
    const env = { XDG_CONFIG_HOME: configDir() };
    writeLogin(LOGIN, env);
    const cwd = configDir();
    expect(resolveAddress({}, env, cwd).addr).toBe(LOGIN.url);
    expect(resolveConnection({}, env, cwd)).toMatchObject({ addr: LOGIN.url, token: LOGIN.token, org: "org_people" });
    expect(resolveConnection({}, { ...env, VAULT_TOKEN: "vsk_given-token-0123456789" }, cwd)).toMatchObject({ token: "vsk_given-token-0123456789", org: undefined });
    expect(resolveConnection({ org: "org_other" }, env, cwd).org).toBe("org_other");
    // Another vault never gets the stored key.
    expect(() => resolveConnection({ addr: "https://other.example.com" }, env, cwd)).toThrow(/no token/);
  });
});

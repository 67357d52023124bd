import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { oidcSettingsOf } from "../../src/assembly/server.js";
import { ConfigError } from "../../src/config.js";
import { config } from "../support/config-helpers.js";

// The single sign-on settings (docs/configuration.md, docs/sso.md "Setup"): their
// defaults, the loopback exception for plain http, and the client secret's file.

const BASE = { VAULT_OIDC_ISSUER: "http://127.0.0.1:9000", VAULT_OIDC_CLIENT_ID: "vault", VAULT_OIDC_ORG: "org_people", VAULT_OIDC_ROLE_MAP: "vault-admins=admin, devs=writer" };

describe("VAULT_OIDC_*", () => {
  it("defaults: off, scopes, groups, 12 hours, token sign-in on", () => {
    const c = config();
    expect(c).toMatchObject({ oidcIssuer: undefined, oidcScopes: "openid profile email groups", oidcRoleClaim: "groups", oidcKeyTtl: 43_200, consoleTokenSignin: true });
    expect(oidcSettingsOf(c)).toBeUndefined();
  });

  it("a loopback http issuer, the map in its order, a duration, and the settings the vault gets", () => {
    const c = config(["--oidc-key-ttl", "2h", "--console-token-signin=false"], { ...BASE, VAULT_OIDC_CLIENT_SECRET: "s3cret-value" });
    expect(c.consoleTokenSignin).toBe(false);
    expect(oidcSettingsOf(c)).toEqual({
      issuer: "http://127.0.0.1:9000",
      clientId: "vault",
      clientSecret: "s3cret-value",
      redirectUrl: undefined,
      scopes: "openid profile email groups",
      roleClaim: "groups",
      orgId: "org_people",
      roleMap: [
        { group: "vault-admins", role: "admin" },
        { group: "devs", role: "writer" },
      ],
      keyTtlSeconds: 7200,
    });
  });

  it("reads the client secret from VAULT_OIDC_CLIENT_SECRET_FILE, trimmed; an empty or missing file refuses the start", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-oidc-"));
    try {
      const file = join(dir, "secret");
      writeFileSync(file, "  from-the-file\n");
      expect(oidcSettingsOf(config([], { ...BASE, VAULT_OIDC_CLIENT_SECRET_FILE: file }))?.clientSecret).toBe("from-the-file");
      writeFileSync(file, "\n");
      expect(() => oidcSettingsOf(config([], { ...BASE, VAULT_OIDC_CLIENT_SECRET_FILE: file }))).toThrow(ConfigError);
      expect(() => oidcSettingsOf(config([], { ...BASE, VAULT_OIDC_CLIENT_SECRET_FILE: join(dir, "none") }))).toThrow(/cannot be read: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

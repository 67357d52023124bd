import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildTestVault, fakeClock } from "../../support/helpers.js";
import type { FakeClock, TestVault } from "../../support/helpers.js";
import { createOrg, expectStatus } from "../../support/org-helpers.js";
import { approveDevice, CookieFetch, startTestIdp } from "../../support/oidc-provider.js";
import type { TestIdp } from "../../support/oidc-provider.js";
import type { OidcSettings } from "../../../src/http/sso/oidc.js";

// The CLI's sign-in routes in process on both engines (docs/sso.md, "The CLI"):
// POST /oidc/device starts a device authorization at a real provider
// (oidc-provider on loopback), POST /oidc/device/token polls it and mints a
// principal key of VAULT_OIDC_KEY_TTL once the person approved; the key is
// refused after its lifetime; a person without a mapped role is refused.

describe("POST /oidc/device and /oidc/device/token", () => {
  let idp: TestIdp;
  let v: TestVault;
  let clock: FakeClock;
  let orgId: string;

  beforeAll(async () => {
    idp = await startTestIdp(
      {
        dana: { email: "dana@example.com", name: "Dana", groups: ["devs"] },
        carol: { email: "carol@example.com", name: "Carol", groups: ["sales"] },
      },
      ["http://vault.test/ui/oidc/callback"],
    );
  });
  afterAll(async () => {
    await idp?.close();
  });
  beforeEach(async () => {
    clock = fakeClock(Date.now());
    const settings: OidcSettings = {
      issuer: idp.issuer,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: "openid profile email groups",
      roleClaim: "groups",
      orgId: "",
      roleMap: [{ group: "devs", role: "writer" }],
      keyTtlSeconds: 600,
    };
    v = buildTestVault({ now: clock.now, oidc: settings });
    orgId = await createOrg(v);
    settings.orgId = orgId;
  });

  const poll = (deviceId: string) => v.request("POST", "/oidc/device/token", { token: null, body: { device_id: deviceId } });

  it("mints a principal key once the person approved; it works, then expires with its lifetime and is refused", async () => {
    const start = await expectStatus(v.request("POST", "/oidc/device", { token: null }), 201);
    expect(start.device_id).toMatch(/^dev_/);
    expect(start.verification_uri).toBe(`${idp.issuer}/device`);
    expect(JSON.stringify(start)).not.toContain("device_code");
    expect(await expectStatus(poll(start.device_id as string), 400)).toMatchObject({ error: "authorization_pending" });
    const done = await approveDevice(new CookieFetch(), idp, start.verification_uri_complete as string, start.user_code as string, "dana");
    expect(done).toMatch(/success|Sign-in Success/i);
    const key = await expectStatus(poll(start.device_id as string), 201);
    expect(key).toMatchObject({ name: "cli login", org_id: orgId, role: "writer", principal_name: "dana@example.com" });
    expect(key.valid_before).toBe(Math.floor((clock.now() + 600_000) / 1000));
    // Answered once: the same device_id again is unknown.
    expect(await expectStatus(poll(start.device_id as string), 400)).toMatchObject({ error: "expired_token" });
    const token = key.key as string;
    expect(token).toMatch(/^vpk_/);
    expect((await v.request("GET", "/me", { token })).status).toBe(200);
    expect((await v.request("PUT", `/orgs/${orgId}/secrets/app/db`, { token, body: { value: "x" } })).status).toBe(201);
    clock.advance(601_000);
    const expired = await expectStatus(v.request("GET", "/me", { token }), 401);
    expect(expired.error).toBe("this key has expired");
  });

  it("a person without a mapped group is refused at the poll, audited", async () => {
    const start = await expectStatus(v.request("POST", "/oidc/device", { token: null }), 201);
    await approveDevice(new CookieFetch(), idp, start.verification_uri_complete as string, start.user_code as string, "carol");
    const refused = await expectStatus(poll(start.device_id as string), 403);
    expect(refused.error).toBe("sign-in refused: no_role");
    expect(await v.query("SELECT action, key, actor FROM audit WHERE scope = ?", orgId)).toEqual([{ action: "signin.refused", key: "no_role", actor: "oidc:sub-carol" }]);
    expect((await expectStatus(v.asMaster("GET", `/orgs/${orgId}/principals`), 200)).principals).toEqual([]);
  });

  it("a device_id the vault did not make is 400, and a vault without single sign-on answers 404", async () => {
    expect(await expectStatus(poll("dev_unknown"), 400)).toMatchObject({ error: "expired_token" });
    const plain = buildTestVault();
    expect((await plain.request("POST", "/oidc/device", { token: null })).status).toBe(404);
  });
});

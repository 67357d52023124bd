import * as v from "valibot";
import type { SingleSignOn } from "../../domain/sso/sign-in.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { ApiError } from "../errors.js";
import { clientOf } from "../pages/routes.js";
import { PerAddressRate } from "../pages/anonymous.js";

import { WaitingDevices } from "../sso/device.js";
import { OidcRefused, SIGNIN_STARTS_PER_MINUTE } from "../sso/oidc.js";
import type { OidcRelyingParty } from "../sso/oidc.js";
import { int } from "./answers.js";
import { route } from "./declare.js";
import type { Route } from "./declare.js";

/** True for the token-less single sign-on paths, `/oidc/...` (docs/sso.md, "The CLI"). */
export function isSsoPath(path: string): boolean {
  return path.startsWith("/oidc/");
}

/** What the device routes need, built by app.ts; `sso` undefined when VAULT_OIDC_ISSUER is unset. */
export interface SsoRouteDeps {
  tx: UnitOfWork<Work>;
  sso: { rp: OidcRelyingParty; signIn: SingleSignOn } | undefined;
  now: () => number;
  trustProxy: boolean;
}

const startSchema = v.object({
  device_id: v.pipe(v.string(), v.description("the handle to poll POST /oidc/device/token with (dev_...); the provider's device code stays in the vault")),
  user_code: v.pipe(v.string(), v.description("what the person types at verification_uri")),
  verification_uri: v.string(),
  verification_uri_complete: v.nullable(v.string()),
  expires_in: v.pipe(int, v.description("seconds the code is valid")),
  interval: v.pipe(int, v.description("seconds to wait between polls")),
});

const keySchema = v.object({
  id: v.pipe(v.string(), v.description("the principal key's id (pk_...)")),
  key: v.pipe(v.string(), v.description("the vpk_ token, shown once")),
  name: v.string(),
  principal_id: v.string(),
  principal_name: v.string(),
  org_id: v.string(),
  role: v.string(),
  valid_before: v.pipe(int, v.description("Unix seconds: now + VAULT_OIDC_KEY_TTL")),
});

const pollBody = v.object({ device_id: v.pipe(v.string(), v.maxLength(128)) });

/**
 * The CLI's sign-in (docs/sso.md, "The CLI"; `ephemeral-vault login`),
 * without a token: `POST /oidc/device` starts a device authorization at the
 * identity provider (RFC 8628) and answers what the person types where;
 * `POST /oidc/device/token` polls it and, once the person approved, lets
 * openid-client verify the ID token, maps the claims (SingleSignOn.signIn)
 * and answers a principal key valid for VAULT_OIDC_KEY_TTL, once. While
 * the person has not approved: 400 `authorization_pending` (or `slow_down`),
 * as RFC 8628 §3.5 names them; a refusal: 403 with the reason, audited
 * `signin.refused`. Without VAULT_OIDC_ISSUER both answer 404.
 */
export function ssoRoutes(deps: SsoRouteDeps): Route[] {
  const waiting = new WaitingDevices(deps.now);
  const starts = new PerAddressRate(SIGNIN_STARTS_PER_MINUTE, 60_000, deps.now);
  const configured = () => {
    if (deps.sso === undefined) throw new ApiError(404, "single sign-on is not configured on this vault (VAULT_OIDC_ISSUER)");
    return deps.sso;
  };
  return [
    route({
      method: "post",
      path: "/oidc/device",
      summary: "Start a CLI sign-in with the identity provider (device authorization grant): the code the person enters at the provider, and the device_id to poll with. No token.",
      permission: "none",
      responses: {
        201: { description: "{device_id, user_code, verification_uri, verification_uri_complete, expires_in, interval}", schema: startSchema },
        404: { description: "single sign-on is not configured" },
        429: { description: "too many sign-ins started from this address in the last minute; Retry-After" },
        502: { description: "the identity provider could not be reached or has no device flow" },
      },
      handler: async (c) => {
        const sso = configured();
        const wait = starts.take(clientOf(c, deps.trustProxy).ip);
        if (wait > 0) throw new ApiError(429, "too many sign-ins started from this address", { headers: { "Retry-After": String(Math.ceil(wait / 1000)) } });
        let start: Awaited<ReturnType<OidcRelyingParty["startDevice"]>>;
        try {
          start = await sso.rp.startDevice();
        } catch (err) {
          if (err instanceof OidcRefused) throw new ApiError(502, "the identity provider refused to start a device sign-in", { message: err.message });
          throw err;
        }
        const deviceId = waiting.put(start.response, start.expiresIn);
        return c.json(
          {
            device_id: deviceId,
            user_code: start.userCode,
            verification_uri: start.verificationUri,
            verification_uri_complete: start.verificationUriComplete ?? null,
            expires_in: start.expiresIn,
            interval: start.interval,
          },
          201,
        );
      },
    }),
    route({
      method: "post",
      path: "/oidc/device/token",
      summary: "Poll a CLI sign-in: once the person approved at the provider, a principal key (vpk_, shown once) valid for VAULT_OIDC_KEY_TTL. No token.",
      permission: "none",
      body: pollBody,
      responses: {
        201: { description: "the principal key minted for the person", schema: keySchema },
        400: { description: "authorization_pending or slow_down (poll again after `interval`), expired_token (unknown or expired device_id), or a bad body" },
        403: { description: "the sign-in was refused (no mapped role, an ID token that failed a check, the person denied it); audited signin.refused" },
        404: { description: "single sign-on is not configured" },
      },
      handler: async (c, { body }) => {
        const sso = configured();
        const device = waiting.get(body.device_id);
        if (device === undefined) throw new ApiError(400, "expired_token", { message: "no device sign-in is waiting with this device_id (it ended, or expired): run ephemeral-vault login again" });
        const ip = clientOf(c, deps.trustProxy).ip;
        let identity: Awaited<ReturnType<OidcRelyingParty["pollDevice"]>>;
        try {
          identity = await sso.rp.pollDevice(device);
        } catch (err) {
          if (!(err instanceof OidcRefused)) throw err;
          waiting.delete(body.device_id);
          await deps.tx.run((w) => sso.signIn.refuse(w, sso.rp.settings.orgId, err.reason, ip));
          throw new ApiError(403, `sign-in refused: ${err.reason}`, { message: err.message });
        }
        if (identity === undefined) throw new ApiError(400, "authorization_pending", { message: "the person has not approved the sign-in yet: poll again after `interval` seconds" });
        waiting.delete(body.device_id);
        const validBefore = deps.now() + sso.rp.settings.keyTtlSeconds * 1000;
        const outcome = await deps.tx.run((w) => sso.signIn.signIn(w, identity, sso.rp.settings, { keyName: "cli login", validBefore }, ip));
        if (outcome.kind === "refused") {
          throw new ApiError(403, `sign-in refused: ${outcome.reason}`, {
            message: outcome.reason === "no_role" ? "your account has none of the groups this vault maps to a role" : "VAULT_OIDC_ORG names no organization of this vault",
          });
        }
        return c.json(
          {
            id: outcome.key.id,
            key: outcome.token,
            name: outcome.key.name,
            principal_id: outcome.principal.id,
            principal_name: outcome.principal.name,
            org_id: outcome.principal.orgId,
            role: outcome.principal.role,
            valid_before: Math.floor(validBefore / 1000),
          },
          201,
        );
      },
    }),
  ];
}

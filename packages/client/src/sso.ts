import { VaultApiError } from "./errors.js";
import type { Transport } from "./http.js";

/** A CLI sign-in started at the vault (POST /oidc/device): what the person enters where, and the handle to poll with. */
export interface DeviceLogin {
  /** The vault's handle (`dev_...`); the provider's device code never leaves the vault. */
  deviceId: string;
  /** What the person types at verificationUri. */
  userCode: string;
  verificationUri: string;
  /** The verification URL with the code in it, when the provider offers one. */
  verificationUriComplete: string | null;
  /** Seconds the code is valid. */
  expiresIn: number;
  /** Seconds to wait between polls. */
  interval: number;
}

/** The principal key a finished sign-in minted (POST /oidc/device/token), shown once. */
export interface LoginKey {
  /** The key's id (`pk_...`): DELETE /me/keys/<id> revokes it. */
  id: string;
  /** The `vpk_` token. */
  key: string;
  name: string;
  principalId: string;
  principalName: string;
  orgId: string;
  role: string;
  /** Unix seconds. */
  validBefore: number;
}

interface StartJson {
  device_id: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string | null;
  expires_in: number;
  interval: number;
}

interface KeyJson {
  id: string;
  key: string;
  name: string;
  principal_id: string;
  principal_name: string;
  org_id: string;
  role: string;
  valid_before: number;
}

/**
 * `POST /oidc/device` without a token (docs/sso.md, "The CLI"): starts a
 * device sign-in at the vault's identity provider.
 * @throws VaultApiError 404 when the vault has no single sign-on, 502 when the provider refused.
 */
export async function startDeviceLogin(t: Transport): Promise<DeviceLogin> {
  const body = await t.json<StartJson>({ method: "POST", path: "/oidc/device", anonymous: true });
  return {
    deviceId: body.device_id,
    userCode: body.user_code,
    verificationUri: body.verification_uri,
    verificationUriComplete: body.verification_uri_complete,
    expiresIn: body.expires_in,
    interval: body.interval,
  };
}

/**
 * One poll of a device sign-in, `POST /oidc/device/token` without a token:
 * the minted key once the person approved, else `"pending"` (or
 * `"slow_down"`: wait longer between polls, RFC 8628 §3.5). Errors name the
 * request `POST /oidc/device/token`, never the device id.
 * @throws VaultApiError 400 `expired_token` (it ended or expired), 403 when the sign-in was refused.
 */
export async function pollDeviceLogin(t: Transport, deviceId: string): Promise<LoginKey | "pending" | "slow_down"> {
  try {
    const body = await t.json<KeyJson>({ method: "POST", path: "/oidc/device/token", body: { device_id: deviceId }, anonymous: true });
    return {
      id: body.id,
      key: body.key,
      name: body.name,
      principalId: body.principal_id,
      principalName: body.principal_name,
      orgId: body.org_id,
      role: body.role,
      validBefore: body.valid_before,
    };
  } catch (err) {
    if (err instanceof VaultApiError && err.status === 400 && err.error === "authorization_pending") return "pending";
    if (err instanceof VaultApiError && err.status === 400 && err.error === "slow_down") return "slow_down";
    throw err;
  }
}

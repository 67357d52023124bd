import * as client from "openid-client";
import { isLoopbackName } from "../../config/values.js";
import type { RoleMapping } from "../../domain/sso/claims.js";
import type { RefusalReason, VerifiedIdentity } from "../../domain/sso/sign-in.js";

/** The single sign-on settings (VAULT_OIDC_*, docs/sso.md "Setup"), resolved by loadConfig. */
export interface OidcSettings {
  /** VAULT_OIDC_ISSUER: https, or http on a loopback host. */
  issuer: string;
  clientId: string;
  /** The client secret (VAULT_OIDC_CLIENT_SECRET or its file); undefined: a public client (PKCE only). */
  clientSecret?: string | undefined;
  /** VAULT_OIDC_REDIRECT_URL; undefined: VAULT_PUBLIC_URL/ui/oidc/callback. */
  redirectUrl?: string | undefined;
  /** Separated by spaces, `openid` among them. */
  scopes: string;
  roleClaim: string;
  /** VAULT_OIDC_ORG: the org id people land in. */
  orgId: string;
  roleMap: readonly RoleMapping[];
  /** VAULT_OIDC_KEY_TTL: the lifetime of a key minted at sign-in, seconds. */
  keyTtlSeconds: number;
}

/**
 * Sign-ins one client address (IPv6 by its /64) may start per minute, in the
 * console and with `ephemeral-vault login` each (docs/sso.md, "Limits"); more answer 429.
 */
export const SIGNIN_STARTS_PER_MINUTE = 20;

/** What the browser's sign-in waits with, kept by the vault (never sent to the browser but as the authorization URL's parameters). */
export interface PendingSignIn {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** Unix milliseconds. */
  createdAt: number;
}

/** A refused callback or device poll: the reason (the audit row's key) and a message for the page, naming no token. */
export class OidcRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = "OidcRefused";
  }
}

/** A started device authorization (RFC 8628 §3.2): what the person types where, and the handle the vault polls with. */
export interface DeviceStart {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | undefined;
  /** Seconds the code is valid. */
  expiresIn: number;
  /** Seconds between polls the provider asks for. */
  interval: number;
  /** The provider's answer, kept by the vault to poll with (holds the device code). */
  response: client.DeviceAuthorizationResponse;
}

/**
 * The vault's OpenID Connect relying party (docs/sso.md), through
 * openid-client (a certified implementation; no JWT is checked by hand):
 * discovery of the issuer at first use, the authorization code flow with
 * PKCE (S256), `state` and `nonce` (OpenID Connect Core 1.0 §3.1), and the
 * device authorization grant (RFC 8628) for the CLI. Every ID token is
 * checked by openid-client: issuer, audience (and `azp`), expiry, `iat`,
 * nonce and signature against the provider's JWKS. The vault's clock decides
 * expiry: openid-client's clock is skewed to it (`now`), so a vault whose clock
 * is ahead sees a token expire. Plain http is allowed only for a loopback
 * issuer (VAULT_OIDC_ISSUER's rule).
 */
export class OidcRelyingParty {
  private server: client.ServerMetadata | undefined;
  private discovering: Promise<client.ServerMetadata> | undefined;
  private jwks: client.ExportedJWKSCache | undefined;

  /**
   * @param now the vault's clock, Unix milliseconds.
   * @param publicUrl VAULT_PUBLIC_URL (the default redirect URL's base).
   */
  constructor(
    readonly settings: OidcSettings,
    private readonly now: () => number,
    private readonly publicUrl: () => string,
  ) {}

  /** The redirect URL: VAULT_OIDC_REDIRECT_URL, else VAULT_PUBLIC_URL/ui/oidc/callback. */
  redirectUrl(): string {
    return this.settings.redirectUrl ?? `${this.publicUrl().replace(/\/+$/, "")}/ui/oidc/callback`;
  }

  /** The name the console shows ("Sign in with ..."): the issuer's host. */
  providerName(): string {
    return new URL(this.settings.issuer).host;
  }

  /**
   * The provider's authorization URL for a new browser sign-in and what the
   * callback must match: a fresh state, nonce and PKCE verifier (S256).
   * @throws OidcRefused "provider" when discovery fails.
   */
  async start(): Promise<{ url: string; pending: PendingSignIn }> {
    const config = await this.config();
    const codeVerifier = client.randomPKCECodeVerifier();
    const pending: PendingSignIn = { state: client.randomState(), nonce: client.randomNonce(), codeVerifier, createdAt: this.now() };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUrl(),
      scope: this.settings.scopes,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /**
   * Completes a browser sign-in: the callback's URL (its code and state, or
   * the provider's error) exchanged at the token endpoint with the PKCE
   * verifier, the ID token verified by openid-client.
   * @param callbackUrl the callback as the browser called it (only its query is read).
   * @throws OidcRefused with the check that failed (state, nonce, audience, issuer, expired, signature, provider).
   */
  async finish(callbackUrl: URL, pending: PendingSignIn): Promise<VerifiedIdentity> {
    const config = await this.config();
    // The redirect URL as registered, with the callback's query: the provider's answer is read from it.
    const current = new URL(this.redirectUrl());
    current.search = callbackUrl.search;
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      throw refusalOf(err);
    } finally {
      this.keepJwks(config);
    }
    return this.identityOf(tokens);
  }

  /**
   * Starts a device authorization at the provider (RFC 8628 §3.1) with the
   * configured scopes.
   * @throws OidcRefused "provider" when the provider has no device endpoint or refuses.
   */
  async startDevice(): Promise<DeviceStart> {
    const config = await this.config();
    let response: client.DeviceAuthorizationResponse;
    try {
      response = await client.initiateDeviceAuthorization(config, { scope: this.settings.scopes });
    } catch (err) {
      throw refusalOf(err);
    }
    return {
      userCode: response.user_code,
      verificationUri: response.verification_uri,
      verificationUriComplete: response.verification_uri_complete,
      expiresIn: response.expires_in,
      interval: response.interval ?? 5,
      response,
    };
  }

  /**
   * One poll of a device authorization (RFC 8628 §3.4): the verified
   * identity once the person approved, or undefined while they have not
   * (`authorization_pending`, `slow_down`).
   * @throws OidcRefused "device" when the code expired or was denied; the ID token's failed check otherwise.
   */
  async pollDevice(start: client.DeviceAuthorizationResponse): Promise<VerifiedIdentity | undefined> {
    const config = await this.config();
    const body = new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: start.device_code });
    let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
    try {
      // One request, not openid-client's own polling loop: the CLI polls the vault.
      tokens = await client.genericGrantRequest(config, "urn:ietf:params:oauth:grant-type:device_code", body);
    } catch (err) {
      if (err instanceof client.ResponseBodyError && (err.error === "authorization_pending" || err.error === "slow_down")) return undefined;
      if (err instanceof client.ResponseBodyError) throw new OidcRefused("device", `the provider refused the device code: ${err.error}`);
      throw refusalOf(err);
    } finally {
      this.keepJwks(config);
    }
    if (tokens.id_token === undefined) throw new OidcRefused("provider", "the provider answered no ID token (is the scope openid asked?)");
    return this.identityOf(tokens);
  }

  private identityOf(tokens: client.TokenEndpointResponseHelpers): VerifiedIdentity {
    const claims = tokens.claims();
    if (claims === undefined) throw new OidcRefused("provider", "the provider answered no ID token");
    return { issuer: claims.iss, subject: claims.sub, claims: { ...claims } };
  }

  /** A Configuration over the discovered metadata with the vault's clock; the JWKS kept across them. */
  private async config(): Promise<client.Configuration> {
    const server = await this.discover();
    const metadata: Partial<client.ClientMetadata> = {
      [client.clockSkew]: Math.round((this.now() - Date.now()) / 1000),
    };
    if (this.settings.clientSecret !== undefined) metadata.client_secret = this.settings.clientSecret;
    const auth = this.settings.clientSecret === undefined ? client.None() : client.ClientSecretPost(this.settings.clientSecret);
    const config = new client.Configuration(server, this.settings.clientId, metadata, auth);
    if (this.insecure()) client.allowInsecureRequests(config);
    // The ID token's signature against the provider's JWKS too, not only TLS to its token endpoint (docs/sso.md, "Claims").
    client.enableNonRepudiationChecks(config);
    if (this.jwks !== undefined) client.setJwksCache(config, this.jwks);
    return config;
  }

  private keepJwks(config: client.Configuration): void {
    this.jwks = client.getJwksCache(config) ?? this.jwks;
  }

  private insecure(): boolean {
    const url = new URL(this.settings.issuer);
    return url.protocol === "http:" && isLoopbackName(url.hostname);
  }

  /** The provider's metadata, read once (a failed read is tried again at the next sign-in). */
  private async discover(): Promise<client.ServerMetadata> {
    if (this.server !== undefined) return this.server;
    this.discovering ??= (async () => {
      try {
        const options = this.insecure() ? { execute: [client.allowInsecureRequests] } : undefined;
        const found = await client.discovery(new URL(this.settings.issuer), this.settings.clientId, undefined, undefined, options);
        this.server = found.serverMetadata();
        return this.server;
      } catch (err) {
        throw new OidcRefused("provider", `the identity provider could not be reached or described itself wrongly (${err instanceof Error ? err.message : String(err)})`);
      } finally {
        this.discovering = undefined;
      }
    })();
    return this.discovering;
  }
}

/** The refusal of an openid-client error: which check failed (docs/sso.md, "Refusals"). */
function refusalOf(err: unknown): OidcRefused {
  if (err instanceof OidcRefused) return err;
  if (err instanceof client.AuthorizationResponseError) return new OidcRefused("provider", `the provider answered an error: ${err.error}`);
  if (err instanceof client.ResponseBodyError) return new OidcRefused("provider", `the provider refused the code: ${err.error}`);
  // openid-client wraps oauth4webapi's error (its `cause`), whose own `cause` names the claim.
  const e = err as { code?: unknown; message?: unknown; cause?: { message?: unknown; claim?: unknown; cause?: { claim?: unknown } } };
  const code = typeof e.code === "string" ? e.code : "";
  const message = [e.message, e.cause?.message].filter((m) => typeof m === "string").join(": ") || String(err);
  const claim = [e.cause?.claim, e.cause?.cause?.claim].find((c): c is string => typeof c === "string") ?? "";
  if (code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED") {
    if (claim === "nonce") return new OidcRefused("nonce", "the ID token's nonce is not this sign-in's");
    if (claim === "aud" || claim === "azp" || /audience|authorized party/.test(message)) return new OidcRefused("audience", "the ID token was issued for another client");
    if (claim === "iss") return new OidcRefused("issuer", "the ID token names another issuer");
  }
  if (code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED") return new OidcRefused("expired", "the ID token has expired or is not valid yet");
  if (/"state"/.test(message)) return new OidcRefused("state", "the answer's state is not this sign-in's");
  if (/nonce/.test(message)) return new OidcRefused("nonce", "the ID token's nonce is not this sign-in's");
  if (/signature|JWS|key selection|jwks/i.test(message) || /SIGNATURE|KEY_SELECTION/.test(code)) return new OidcRefused("signature", "the ID token's signature does not verify");
  return new OidcRefused("provider", `the provider's answer was refused (${message})`);
}

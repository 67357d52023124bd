import type { ChangeAudit, Origin } from "../events.js";
import type { PrincipalKeys } from "../orgs/principal-keys.js";
import type { Principals } from "../orgs/principals.js";
import type { Principal, PrincipalKey } from "../../model/records.js";
import type { Work } from "../../store/work.js";
import { fallbackName, principalNameFrom, roleFromClaims } from "./claims.js";
import type { RoleMapping } from "./claims.js";

/** A person as a verified ID token names them: its issuer, subject and claims (never the token). */
export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  claims: Record<string, unknown>;
}

/** What decides a person's principal (VAULT_OIDC_ORG, VAULT_OIDC_ROLE_CLAIM, VAULT_OIDC_ROLE_MAP). */
export interface SignInPolicy {
  orgId: string;
  roleClaim: string;
  roleMap: readonly RoleMapping[];
}

/**
 * Why a sign-in is refused (the `key` of its `signin.refused` audit row,
 * docs/audit.md): `no_role` (the claims map to no role), `no_org`
 * (VAULT_OIDC_ORG names no org), `state` (no sign-in of this browser is
 * waiting, or its state does not match: a forged or replayed callback),
 * `nonce`, `audience`, `issuer`, `expired`, `signature` (the ID token
 * failed that check), `provider` (the provider answered an error or could
 * not be reached), `device` (a device code unknown, expired or denied).
 */
export type RefusalReason =
  | "no_role"
  | "no_org"
  | "state"
  | "nonce"
  | "audience"
  | "issuer"
  | "expired"
  | "signature"
  | "provider"
  | "device";

/** A sign-in's outcome: the principal and its new key, or the reason it was refused. */
export type SignInOutcome =
  | {
      kind: "signed_in";
      principal: Principal;
      /** True at the person's first sign-in. */
      created: boolean;
      /** The role before this sign-in changed it, or null when it did not change. */
      previousRole: string | null;
      key: PrincipalKey;
      /** The `vpk_` token: the only time it exists in clear. */
      token: string;
    }
  | { kind: "refused"; reason: RefusalReason };

/** The key minted at sign-in: its name and end, Unix milliseconds. */
export interface MintRequest {
  keyName: string;
  validBefore: number;
}

/** The parts single sign-on uses: the clock, principals, their keys and the audit log. */
export interface SingleSignOnDeps {
  /** Current time, Unix milliseconds. */
  now: () => number;
  principals: Principals;
  principalKeys: PrincipalKeys;
  audit: ChangeAudit;
}

/**
 * Signing people in with an identity provider (docs/sso.md): from a verified
 * ID token's claims to the person's principal in VAULT_OIDC_ORG and a
 * short-lived principal key. No HTTP and no token checks here: the caller
 * hands over an identity whose ID token openid-client verified (issuer,
 * audience, expiry, nonce, signature). Every method takes the unit of work's
 * handle; a refusal is an outcome (its audit row commits), never a throw.
 */
export class SingleSignOn {
  constructor(private readonly deps: SingleSignOnDeps) {}

  /** The audit actor of a person (docs/audit.md): `oidc:` and the provider's subject. */
  static actorOf(subject: string): string {
    return `oidc:${subject}`;
  }

  /**
   * Signs a person in (docs/sso.md, "What a sign-in does"). The role comes
   * from the claims (roleFromClaims): none refuses (`signin.refused`,
   * `no_role`). The first sign-in makes the principal (`principal.created`,
   * actor `oidc:<sub>`; named after the claims, principalNameFrom, with
   * the subject added when the name is taken) and links issuer and subject
   * to it; a later one changes its role when the claims give another
   * (`principal.updated`). A link whose principal was deleted makes a new
   * one. Then a principal key valid until `mint.validBefore`
   * (`key.created`, actor `oidc:<sub>`, the principal named).
   * @param ip the client's address, for the audit rows.
   * @throws VaultError "conflict" (409) when both names are taken in the org;
   *   whatever the store throws.
   */
  async signIn(w: Work, identity: VerifiedIdentity, policy: SignInPolicy, mint: MintRequest, ip: string | null): Promise<SignInOutcome> {
    const actor = SingleSignOn.actorOf(identity.subject);
    const origin: Origin = { actor, principalId: null, ip };
    if ((await w.orgs.byId(policy.orgId)) === undefined) return this.refused(w, origin, "global", "no_org");
    const role = roleFromClaims(identity.claims, policy.roleClaim, policy.roleMap);
    const link = await w.identities.get(identity.issuer, identity.subject);
    const known = link === undefined || link.orgId !== policy.orgId ? undefined : await this.deps.principals.get(w, policy.orgId, link.principalId);
    if (role === undefined) {
      return this.refused(w, { actor, principalId: known?.id ?? null, ip }, policy.orgId, "no_role");
    }
    let principal: Principal;
    let created = false;
    let previousRole: string | null = null;
    if (known === undefined) {
      principal = await this.deps.principals.create(w, policy.orgId, await this.freeName(w, policy.orgId, identity), role, origin);
      created = true;
      await w.identities.put({ issuer: identity.issuer, subject: identity.subject, orgId: policy.orgId, principalId: principal.id, createdAt: this.deps.now() });
    } else if (known.role !== role) {
      previousRole = known.role;
      principal = await this.deps.principals.update(w, policy.orgId, known.id, { role }, { actor, principalId: known.id, ip });
    } else {
      principal = known;
    }
    const { key, token } = await this.deps.principalKeys.create(
      w,
      policy.orgId,
      principal.id,
      { name: mint.keyName, validBefore: mint.validBefore },
      { actor, principalId: principal.id, ip },
    );
    return { kind: "signed_in", principal, created, previousRole, key, token };
  }

  /**
   * Records a sign-in refused before any identity was verified (a forged or
   * replayed callback, an ID token that failed a check, a provider error):
   * `signin.refused` in the org's log with the reason as its key, actor null
   * (nobody is known), the client's address.
   */
  async refuse(w: Work, orgId: string, reason: RefusalReason, ip: string | null): Promise<void> {
    const scope = (await w.orgs.byId(orgId)) === undefined ? "global" : orgId;
    await this.deps.audit.recordFor(w, { actor: null, principalId: null, ip }, scope, "signin.refused", reason);
  }

  private async refused(w: Work, origin: Origin, scope: string, reason: RefusalReason): Promise<SignInOutcome> {
    await this.deps.audit.recordFor(w, origin, scope, "signin.refused", reason);
    return { kind: "refused", reason };
  }

  private async freeName(w: Work, orgId: string, identity: VerifiedIdentity): Promise<string> {
    const name = principalNameFrom(identity.claims);
    return (await w.principals.nameTaken(orgId, name)) ? fallbackName(name, identity.subject) : name;
  }
}

import type { Awaitable } from "../model/awaitable.js";

/** One link of a person to their principal (schema.sql version 23). Times are Unix milliseconds. */
export interface IdentityLink {
  /** The identity provider's issuer URL, exactly as its ID tokens name it. */
  issuer: string;
  /** The ID token's `sub`. */
  subject: string;
  orgId: string;
  principalId: string;
  createdAt: number;
}

/** The `oidc_identities` table, written once for both engines (store/sql/identities.ts). */
export interface IdentityStore {
  /** The link of issuer and subject, or undefined. */
  get(issuer: string, subject: string): Awaitable<IdentityLink | undefined>;
  /** Stores the link, replacing the one of the same issuer and subject. */
  put(link: IdentityLink): Awaitable<void>;
}

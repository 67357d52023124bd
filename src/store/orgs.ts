import type { Org } from "../model/records.js";
import type { Principal } from "../model/records.js";
import type { PrincipalKey } from "../model/records.js";
import type { Awaitable } from "../model/awaitable.js";

/** A stored row with its position in creation order (the list cursor). */
export type Positioned<T> = T & { seq: number };

/** A custom role as stored: letters of rRlLcCpPaAmMdD. */
export interface RoleRecord {
  seq: number;
  orgId: string;
  name: string;
  permissions: string;
}

/** What still refers to an org (docs/contract.md §9: deletes do not cascade). */
export interface OrgDependents {
  principals: boolean;
  customRoles: boolean;
  /** Live secrets not past their TTL. */
  liveSecrets: boolean;
  webhooks: boolean;
  /** Any secret row at all, tombstones and secrets past their TTL included. */
  anySecretRow: boolean;
}

/**
 * The `orgs` table (schema.sql section 4). Times in Unix milliseconds;
 * metadata is a JSON object.
 */
export interface OrgStore {
  byId(id: string): Awaitable<Positioned<Org> | undefined>;
  /** Whether an org has this name. */
  nameTaken(name: string): Awaitable<boolean>;
  /**
   * @throws VaultError "conflict" when the name is taken (the unique constraint decides).
   */
  insert(org: Org): Awaitable<Positioned<Org>>;
  page(afterSeq: number, limit: number): Awaitable<Positioned<Org>[]>;
  /** What refers to the org, `now` deciding which secrets are live. */
  dependents(orgId: string, now: number): Awaitable<OrgDependents>;
  remove(orgId: string): Awaitable<void>;
}

/** The `roles` table: custom roles only (built-in roles are constants). */
export interface RoleStore {
  get(orgId: string, name: string): Awaitable<RoleRecord | undefined>;
  /** @throws VaultError "conflict" when the org has a role of that name. */
  insert(orgId: string, name: string, permissions: string, now: number): Awaitable<RoleRecord>;
  /** @returns the updated role, or undefined when there is none of that name. */
  update(orgId: string, name: string, permissions: string): Awaitable<RoleRecord | undefined>;
  remove(orgId: string, name: string): Awaitable<void>;
  page(orgId: string, afterSeq: number, limit: number): Awaitable<RoleRecord[]>;
  /** Whether a principal of the org has this role. */
  assigned(orgId: string, name: string): Awaitable<boolean>;
}

/** The `principals` table. */
export interface PrincipalStore {
  get(orgId: string, id: string): Awaitable<Positioned<Principal> | undefined>;
  nameTaken(orgId: string, name: string): Awaitable<boolean>;
  /** @throws VaultError "conflict" when the org has a principal of that name. */
  insert(principal: Principal): Awaitable<Positioned<Principal>>;
  /**
   * Writes name, role and metadata.
   * @throws VaultError "conflict" when the new name is taken in the org.
   */
  update(principal: Principal): Awaitable<Positioned<Principal>>;
  page(orgId: string, afterSeq: number, limit: number): Awaitable<Positioned<Principal>[]>;
  /** Deletes the principal and its (expired) keys. */
  remove(id: string): Awaitable<void>;
}

/** A principal key as the token lookup finds it: the key and its principal's role. */
export type PrincipalKeyWithRole = PrincipalKey & { role: string };

/** The `principal_keys` table: only the SHA-256 of a token is stored. */
export interface PrincipalKeyStore {
  insert(key: PrincipalKey, tokenHash: string): Awaitable<Positioned<PrincipalKey>>;
  /** @param limit null: every key. */
  page(principalId: string, afterSeq: number, limit: number | null): Awaitable<Positioned<PrincipalKey>[]>;
  get(principalId: string, id: string): Awaitable<PrincipalKey | undefined>;
  /** Whether `id` is a principal key of the org. */
  inOrg(orgId: string, id: string): Awaitable<boolean>;
  /** The valid_before of a key (ms), null for none, undefined for an unknown key. */
  validBefore(id: string): Awaitable<number | null | undefined>;
  byTokenHash(tokenHash: string): Awaitable<PrincipalKeyWithRole | undefined>;
  /** Whether the principal has a key still valid at `now` (or not yet valid). */
  hasActive(principalId: string, now: number): Awaitable<boolean>;
  /**
   * The ids of every key minted from `id`, transitively (children,
   * grandchildren, ...: parent_key_id), oldest first; `id` itself excluded.
   */
  descendants(id: string): Awaitable<string[]>;
  /**
   * Serializes minting and revoking the principal's keys until the
   * transaction ends, so that a revocation's walk of descendants sees every
   * key minted before it and no key is minted from a key revoked meanwhile.
   * An engine whose units of work already run one at a time may do nothing.
   */
  lockKeys(principalId: string): Awaitable<void>;
  remove(id: string): Awaitable<void>;
}

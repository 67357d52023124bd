import { newId } from "../../crypto/tokens.js";
import { VaultError } from "../../model/errors.js";
import type { Origin } from "../events.js";
import type { OrgServiceDeps } from "./orgs.js";
import type { Page } from "../paging.js";
import { cutPage } from "../paging.js";
import type { Roles } from "./roles.js";
import type { Positioned } from "../../store/orgs.js";
import type { Work } from "../../store/work.js";
import type { Principal } from "../../model/records.js";
export type { Principal } from "../../model/records.js";

/** Fields a PATCH may change; undefined leaves a field as it is. */
export interface PrincipalPatch {
  name?: string | undefined;
  role?: string | undefined;
  /** Replaces the whole metadata object. */
  metadata?: Record<string, unknown> | undefined;
}

/**
 * Principals record `principal.created` / `.updated` / `.deleted`, their keys
 * `key.created` / `key.deleted`, in the org's log; both check roles.
 */
export interface PrincipalsDeps extends OrgServiceDeps {
  roles: Roles;
}

/**
 * Principals of an org (docs/contract.md
 * §4 and §9). Every method takes the unit of work's handle. The
 * caller checks that the org exists.
 */
export class Principals {
  constructor(private readonly deps: PrincipalsDeps) {}

  /**
   * Creates a principal. Audit: `principal.created` with its id, in the
   * org's log (docs/audit.md "Management changes").
   * @param name 1-128 characters, already trimmed.
   * @param origin who asks (the master key), for the audit row.
   * @throws VaultError "invalid" (400) when the org has no role `role`;
   *   "conflict" (409) when the org has a principal of this name.
   */
  async create(w: Work, orgId: string, name: string, role: string, origin: Origin): Promise<Principal> {
    await this.checkRole(w, orgId, role);
    await this.checkNameFree(w, orgId, name);
    const principal = withoutSeq(await w.principals.insert({ id: newId("prn_"), orgId, name, role, metadata: {}, createdAt: this.deps.now() }));
    await this.deps.audit.recordFor(w, origin, orgId, "principal.created", principal.id);
    return principal;
  }

  /** The principal of the org, or undefined. */
  async get(w: Work, orgId: string, principalId: string): Promise<Principal | undefined> {
    const row = await w.principals.get(orgId, principalId);
    return row ? withoutSeq(row) : undefined;
  }

  /**
   * The principal of the org.
   * @throws VaultError "not_found" (404).
   */
  async require(w: Work, orgId: string, principalId: string): Promise<Principal> {
    const principal = await this.get(w, orgId, principalId);
    if (!principal) throw new VaultError("not_found", "principal not found");
    return principal;
  }

  /** One page of the org's principals in creation order; `limit` 1-1000. */
  async list(w: Work, orgId: string, limit: number, afterId = 0): Promise<Page<Principal>> {
    const { rows, next } = cutPage(await w.principals.page(orgId, afterId, limit + 1), limit, (row) => row.seq);
    return { items: rows.map(withoutSeq), nextAfterId: next };
  }

  /**
   * Changes a principal's name, role and/or metadata. A new role applies
   * to its keys' next request. Audit: `principal.updated` with its id, in
   * the org's log, when the patch names at least one field (a patch naming
   * none changes nothing and writes nothing).
   * @param origin the master key, or the principal's own key (PATCH /me).
   * @throws VaultError "not_found" (404); "invalid" (400) for an unknown
   *   role; "conflict" (409) when the new name is taken in the org.
   */
  async update(w: Work, orgId: string, principalId: string, patch: PrincipalPatch, origin: Origin): Promise<Principal> {
    const current = await this.require(w, orgId, principalId);
    if (patch.name === undefined && patch.role === undefined && patch.metadata === undefined) return current;
    if (patch.role !== undefined) await this.checkRole(w, orgId, patch.role);
    if (patch.name !== undefined && patch.name !== current.name) await this.checkNameFree(w, orgId, patch.name);
    const row = await w.principals.update(
      Object.assign({}, current, {
        name: patch.name ?? current.name,
        role: patch.role ?? current.role,
        metadata: patch.metadata ?? current.metadata,
      }),
    );
    await this.deps.audit.recordFor(w, origin, orgId, "principal.updated", principalId);
    return withoutSeq(row);
  }

  /**
   * Deletes a principal that has no active key (docs/contract.md §9): a
   * key is active while not revoked and its valid_before has not passed.
   * Its keys that have passed valid_before go with it. Audit:
   * `principal.deleted` with its id, in the org's log.
   * @throws VaultError "not_found" (404); "conflict" (409) while it has an active key.
   */
  async remove(w: Work, orgId: string, principalId: string, origin: Origin): Promise<void> {
    await this.require(w, orgId, principalId);
    if (await w.principalKeys.hasActive(principalId, this.deps.now())) {
      throw new VaultError("conflict", "the principal has active keys", {
        message: "revoke its keys first; deletes do not cascade",
      });
    }
    await w.principals.remove(principalId);
    await this.deps.audit.recordFor(w, origin, orgId, "principal.deleted", principalId);
  }

  private async checkRole(w: Work, orgId: string, role: string): Promise<void> {
    if ((await this.deps.roles.lettersOf(w, orgId, role)) === undefined) {
      throw new VaultError("invalid", "role must name a built-in role or a custom role of this organization");
    }
  }

  private async checkNameFree(w: Work, orgId: string, name: string): Promise<void> {
    if (await w.principals.nameTaken(orgId, name)) throw new VaultError("conflict", "a principal with this name exists in the organization");
  }
}

/** A stored principal without its list position. */
function withoutSeq(row: Positioned<Principal>): Principal {
  const { seq: _seq, ...principal } = row;
  return principal;
}

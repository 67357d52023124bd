import { VaultError } from "../../model/errors.js";
import type { ChangeAudit, Origin } from "../events.js";
import { BUILTIN_ROLES, isBuiltinRole, roleStringProblem } from "../permissions.js";
import { cutPage } from "../paging.js";
import type { Page } from "../paging.js";
import type { RoleRecord } from "../../store/orgs.js";
import type { Work } from "../../store/work.js";

/** A role of an org: built-in or custom. Times in milliseconds. */
export interface Role {
  orgId: string;
  name: string;
  /** Permission letters (docs/contract.md §8). */
  permissions: string;
  builtin: boolean;
}

export interface RolesDeps {
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Records `role.created` / `.updated` / `.deleted` in the org's log, in the change's transaction. */
  audit: ChangeAudit;
}

const BUILTIN_NAMES = Object.keys(BUILTIN_ROLES);

/**
 * Roles of an org (docs/contract.md
 * §8 and §9): the four built-in roles, immutable and shared by every org, and the
 * org's custom roles. Every method takes the unit of work's handle.
 * The caller checks that the org exists.
 */
export class Roles {
  constructor(private readonly deps: RolesDeps) {}

  /**
   * The permission letters of a role of the org, or undefined when the org
   * has no such role. Read on every request by the principal-key resolver,
   * so a role change takes effect at once.
   */
  async lettersOf(w: Work, orgId: string, name: string): Promise<string | undefined> {
    if (isBuiltinRole(name)) return BUILTIN_ROLES[name];
    return (await w.roles.get(orgId, name))?.permissions;
  }

  /**
   * One page of the org's roles: the built-in ones first (positions 1-4),
   * then the custom ones in creation order (position 4 + row id).
   * @param after the position to continue after (0: from the start).
   * @param limit page size, 1-1000.
   */
  async list(w: Work, orgId: string, limit: number, after = 0): Promise<Page<Role>> {
    const builtins = BUILTIN_NAMES.map((name, i) => ({
      position: i + 1,
      role: { orgId, name, permissions: BUILTIN_ROLES[name] as string, builtin: true },
    })).filter((entry) => entry.position > after);
    const customAfter = Math.max(0, after - BUILTIN_NAMES.length);
    const custom = (await w.roles.page(orgId, customAfter, limit + 1)).map((row) => ({
      position: BUILTIN_NAMES.length + row.seq,
      role: toRole(row),
    }));
    const { rows, next } = cutPage([...builtins, ...custom], limit, (entry) => entry.position);
    return { items: rows.map((entry) => entry.role), nextAfterId: next };
  }

  /**
   * Creates a custom role. Audit: `role.created` with the role's name, in
   * the org's log (docs/audit.md "Management changes").
   * @param name `^[a-z][a-z0-9_-]{0,63}$` (checked at the edge).
   * @param origin who asks (the master key), for the audit row.
   * @throws VaultError "invalid" (400) for a bad permission string;
   *   "conflict" (409) when the name is taken, built-in names included.
   */
  async create(w: Work, orgId: string, name: string, permissions: string, origin: Origin): Promise<Role> {
    checkLetters(permissions);
    if (isBuiltinRole(name) || (await w.roles.get(orgId, name))) {
      throw new VaultError("conflict", "a role with this name exists");
    }
    const role = toRole(await w.roles.insert(orgId, name, permissions, this.deps.now()));
    await this.deps.audit.recordFor(w, origin, orgId, "role.created", name);
    return role;
  }

  /**
   * Replaces a custom role's permissions; principals holding the role get
   * them on their next request. Audit: `role.updated` with the role's name,
   * in the org's log.
   * @throws VaultError "forbidden" (403) for a built-in role; "invalid" (400)
   *   for a bad permission string; "not_found" (404) for an unknown role.
   */
  async update(w: Work, orgId: string, name: string, permissions: string, origin: Origin): Promise<Role> {
    if (isBuiltinRole(name)) throw new VaultError("forbidden", "built-in roles cannot be modified");
    checkLetters(permissions);
    const row = await w.roles.update(orgId, name, permissions);
    if (!row) throw new VaultError("not_found", "role not found");
    await this.deps.audit.recordFor(w, origin, orgId, "role.updated", name);
    return toRole(row);
  }

  /**
   * Deletes a custom role. Audit: `role.deleted` with the role's name, in
   * the org's log.
   * @throws VaultError "forbidden" (403) for a built-in role; "not_found"
   *   (404) for an unknown one; "conflict" (409) while a principal holds it.
   */
  async remove(w: Work, orgId: string, name: string, origin: Origin): Promise<void> {
    if (isBuiltinRole(name)) throw new VaultError("forbidden", "built-in roles cannot be deleted");
    if (!(await w.roles.get(orgId, name))) throw new VaultError("not_found", "role not found");
    if (await w.roles.assigned(orgId, name)) {
      throw new VaultError("conflict", "the role is assigned to principals", {
        message: "give those principals another role first; deletes do not cascade",
      });
    }
    await w.roles.remove(orgId, name);
    await this.deps.audit.recordFor(w, origin, orgId, "role.deleted", name);
  }
}

function checkLetters(permissions: string): void {
  const problem = roleStringProblem(permissions);
  if (problem !== undefined) throw new VaultError("invalid", problem);
}

function toRole(row: RoleRecord): Role {
  return { orgId: row.orgId, name: row.name, permissions: row.permissions, builtin: false };
}

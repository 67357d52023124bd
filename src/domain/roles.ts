import type { Db } from "../db.js";
import { VaultError } from "./errors.js";
import { BUILTIN_ROLES, isBuiltinRole, roleStringProblem } from "./permissions.js";
import { cutPage } from "./paging.js";
import type { Page } from "./paging.js";

/** A role of an org: built-in or custom. Times in milliseconds. */
export interface Role {
  orgId: string;
  name: string;
  /** Permission letters (decisions.md section 5). */
  permissions: string;
  builtin: boolean;
}

interface RoleRow {
  id: number;
  org_id: string;
  name: string;
  permissions: string;
  created_at: number;
}

export interface RolesDeps {
  db: Db;
  /** Current time, Unix milliseconds. */
  now: () => number;
}

const BUILTIN_NAMES = Object.keys(BUILTIN_ROLES);

/**
 * Roles of an org (interface sections 2 "Role" and 5.8, decisions.md sections
 * 5-6): the four built-in roles, immutable and shared by every org, and the
 * org's custom roles. Synchronous; run changes inside GroupCommit.run().
 * The caller checks that the org exists.
 */
export class Roles {
  private readonly q;

  constructor(private readonly deps: RolesDeps) {
    const db = deps.db;
    this.q = {
      get: db.prepare<[string, string], RoleRow>("SELECT * FROM roles WHERE org_id = ? AND name = ?"),
      insert: db.prepare<[string, string, string, number], RoleRow>(
        "INSERT INTO roles (org_id, name, permissions, created_at) VALUES (?, ?, ?, ?) RETURNING *",
      ),
      update: db.prepare<[string, string, string], RoleRow>(
        "UPDATE roles SET permissions = ? WHERE org_id = ? AND name = ? RETURNING *",
      ),
      remove: db.prepare<[string, string]>("DELETE FROM roles WHERE org_id = ? AND name = ?"),
      page: db.prepare<[string, number, number], RoleRow>(
        "SELECT * FROM roles WHERE org_id = ? AND id > ? ORDER BY id LIMIT ?",
      ),
      assigned: db.prepare<[string, string], { one: number }>(
        "SELECT 1 AS one FROM principals WHERE org_id = ? AND role = ? LIMIT 1",
      ),
    };
  }

  /**
   * The permission letters of a role of the org, or undefined when the org
   * has no such role. Read on every request by the principal-key resolver,
   * so a role change takes effect at once.
   */
  lettersOf(orgId: string, name: string): string | undefined {
    if (isBuiltinRole(name)) return BUILTIN_ROLES[name];
    return this.q.get.get(orgId, name)?.permissions;
  }

  /**
   * One page of the org's roles: the built-in ones first (positions 1-4),
   * then the custom ones in creation order (position 4 + row id).
   * @param after the position to continue after (0: from the start).
   * @param limit page size, 1-1000.
   */
  list(orgId: string, limit: number, after = 0): Page<Role> {
    const builtins = BUILTIN_NAMES.map((name, i) => ({
      position: i + 1,
      role: { orgId, name, permissions: BUILTIN_ROLES[name] as string, builtin: true },
    })).filter((entry) => entry.position > after);
    const customAfter = Math.max(0, after - BUILTIN_NAMES.length);
    const custom = this.q.page
      .all(orgId, customAfter, limit + 1)
      .map((row) => ({ position: BUILTIN_NAMES.length + row.id, role: toRole(row) }));
    const { rows, next } = cutPage([...builtins, ...custom], limit, (entry) => entry.position);
    return { items: rows.map((entry) => entry.role), nextAfterId: next };
  }

  /**
   * Creates a custom role.
   * @param name `^[a-z][a-z0-9_-]{0,63}$` (checked at the edge).
   * @throws VaultError "invalid" (400) for a bad permission string;
   *   "conflict" (409) when the name is taken, built-in names included.
   */
  create(orgId: string, name: string, permissions: string): Role {
    checkLetters(permissions);
    if (isBuiltinRole(name) || this.q.get.get(orgId, name)) {
      throw new VaultError("conflict", "a role with this name exists");
    }
    return toRole(this.q.insert.get(orgId, name, permissions, this.deps.now()) as RoleRow);
  }

  /**
   * Replaces a custom role's permissions; principals holding the role get
   * them on their next request.
   * @throws VaultError "forbidden" (403) for a built-in role; "invalid" (400)
   *   for a bad permission string; "not_found" (404) for an unknown role.
   */
  update(orgId: string, name: string, permissions: string): Role {
    if (isBuiltinRole(name)) throw new VaultError("forbidden", "built-in roles cannot be modified");
    checkLetters(permissions);
    const row = this.q.update.get(permissions, orgId, name);
    if (!row) throw new VaultError("not_found", "role not found");
    return toRole(row);
  }

  /**
   * Deletes a custom role.
   * @throws VaultError "forbidden" (403) for a built-in role; "not_found"
   *   (404) for an unknown one; "conflict" (409) while a principal holds it.
   */
  remove(orgId: string, name: string): void {
    if (isBuiltinRole(name)) throw new VaultError("forbidden", "built-in roles cannot be deleted");
    if (!this.q.get.get(orgId, name)) throw new VaultError("not_found", "role not found");
    if (this.q.assigned.get(orgId, name)) {
      throw new VaultError("conflict", "the role is assigned to principals", {
        message: "give those principals another role first; deletes do not cascade",
      });
    }
    this.q.remove.run(orgId, name);
  }
}

function checkLetters(permissions: string): void {
  const problem = roleStringProblem(permissions);
  if (problem !== undefined) throw new VaultError("invalid", problem);
}

function toRole(row: RoleRow): Role {
  return { orgId: row.org_id, name: row.name, permissions: row.permissions, builtin: false };
}

import type { Permission } from "../model/records.js";
export { SCOPED_PERMISSIONS } from "../model/records.js";
export type { Permission } from "../model/records.js";
/**
 * Who may do what (docs/contract.md §8):
 * scoped API key permissions, and role permission letters.
 *
 * A role's permission string is a set of letters. Eight have a meaning; the
 * six others (`R L p A m D`) are reserved: valid in a role string, they grant
 * nothing yet.
 */

/**
 * The one table of scoped-key permissions (docs/contract.md
 * §8): which held permissions satisfy a need. `admin` includes read,
 * write and delete.
 */
export const PERMISSION_GRANTED_BY: Readonly<Record<Permission, readonly Permission[]>> = {
  read: ["read", "admin"],
  write: ["write", "admin"],
  delete: ["delete", "admin"],
  admin: ["admin"],
};

/**
 * True when a holder of the scoped permissions `held` has `wanted`, by
 * PERMISSION_GRANTED_BY. Used by the route guard (need()) and by key
 * creation (a key may grant only what its creator holds).
 */
export function holdsPermission(held: readonly string[], wanted: Permission): boolean {
  return PERMISSION_GRANTED_BY[wanted].some((p) => held.includes(p));
}

/** The letters that grant something, and what they grant. */
export const GRANTING_LETTERS = {
  r: "SecretRead (GET and HEAD /orgs/:org_id/secrets/:key)",
  l: "SecretList (GET /orgs/:org_id/secrets)",
  c: "SecretCreate (POST /orgs/:org_id/secrets)",
  P: "SecretPatch (PATCH /orgs/:org_id/secrets/:key)",
  d: "SecretDelete (DELETE /orgs/:org_id/secrets/:key)",
  C: "SecretPrune (POST /orgs/:org_id/prune)",
  a: "AuditRead (GET /orgs/:org_id/audit)",
  M: "WebhookManage (/orgs/:org_id/webhooks*)",
} as const;

/** A letter that grants a permission; what `needOrg()` takes. */
export type OrgLetter = keyof typeof GRANTING_LETTERS;

/** Every letter a role string may hold, reserved ones included, each at most once. */
export const ROLE_LETTERS = "rRlLcCpPaAmMdD";

/** The built-in roles of every org (docs/contract.md §8): immutable. */
export const BUILTIN_ROLES: Readonly<Record<string, string>> = Object.freeze({
  reader: "rRl",
  writer: "rRlLcCpP",
  admin: "rRlLcCpPaAmM",
  owner: "rRlLcCpPaAmMdD",
});

/** True for `reader`, `writer`, `admin` and `owner`. */
export function isBuiltinRole(name: string): boolean {
  return Object.hasOwn(BUILTIN_ROLES, name);
}

/**
 * Why a role permission string is invalid, or undefined when it is valid
 * (docs/contract.md §8): non-empty, only the 14 letters of ROLE_LETTERS,
 * each at most once.
 */
export function roleStringProblem(permissions: string): string | undefined {
  if (permissions.length === 0) return "permissions must not be empty";
  const seen = new Set<string>();
  for (const letter of permissions) {
    if (!ROLE_LETTERS.includes(letter)) return `permissions may hold only the letters ${ROLE_LETTERS}`;
    if (seen.has(letter)) return "permissions must name each letter at most once";
    seen.add(letter);
  }
  return undefined;
}

/** True when the role string grants the letter (reserved letters never match an OrgLetter). */
export function roleGrants(letters: string, letter: OrgLetter): boolean {
  return letters.includes(letter);
}

/** One pair of VAULT_OIDC_ROLE_MAP: people with `group` in the role claim get `role`. */
export interface RoleMapping {
  group: string;
  role: string;
}

/**
 * The values of the role claim (docs/sso.md, "Roles"): a list of strings as
 * providers send `groups`, or one string (a single group); anything else
 * gives none.
 */
export function claimValues(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

/**
 * The role a person's claims map to (docs/sso.md, "Roles"): the first pair
 * of the map, from the left, whose group is among the claim's values.
 * @returns the role name, or undefined when no pair matches (the sign-in is refused).
 */
export function roleFromClaims(claims: Record<string, unknown>, claim: string, map: readonly RoleMapping[]): string | undefined {
  const values = new Set(claimValues(claims, claim));
  return map.find((pair) => values.has(pair.group))?.role;
}

/** The longest principal name (docs/orgs.md). */
const MAX_NAME = 128;

/**
 * The principal name of a person (docs/sso.md, "Claims"): the ID token's
 * `email`, else `preferred_username`, else `sub`, trimmed and cut to 128
 * characters.
 */
export function principalNameFrom(claims: Record<string, unknown>): string {
  for (const field of ["email", "preferred_username", "sub"]) {
    const value = claims[field];
    if (typeof value === "string" && value.trim() !== "") return value.trim().slice(0, MAX_NAME);
  }
  return "person";
}

/**
 * A second choice of name when the first is another principal's in the org:
 * the name followed by the subject in parentheses, cut to 128 characters.
 */
export function fallbackName(name: string, subject: string): string {
  const suffix = ` (${subject})`;
  return `${name.slice(0, Math.max(1, MAX_NAME - suffix.length))}${suffix}`.slice(0, MAX_NAME);
}

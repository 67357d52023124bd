import { describe, expect, it } from "vitest";
import { claimValues, fallbackName, principalNameFrom, roleFromClaims } from "../../../src/domain/sso/claims.js";
import { ConfigError } from "../../../src/config.js";
import { roleMap } from "../../../src/config/values.js";

// Claims to role and name (docs/sso.md, "Claims" and "Roles"): the first pair of
// the map that matches decides; a claim that is not a list of strings gives none.

const MAP = [
  { group: "vault-admins", role: "admin" },
  { group: "devs", role: "writer" },
];

describe("claims to a role", () => {
  it("the first pair of the map from the left whose group the person has decides", () => {
    expect(roleFromClaims({ groups: ["devs", "vault-admins"] }, "groups", MAP)).toBe("admin");
    expect(roleFromClaims({ groups: ["devs"] }, "groups", MAP)).toBe("writer");
    expect(roleFromClaims({ groups: ["sales"] }, "groups", MAP)).toBeUndefined();
    expect(roleFromClaims({}, "groups", MAP)).toBeUndefined();
  });

  it("reads the configured claim, a list of strings or one string; anything else gives none", () => {
    expect(roleFromClaims({ roles: "devs" }, "roles", MAP)).toBe("writer");
    expect(claimValues({ groups: ["a", 1, null, "b"] }, "groups")).toEqual(["a", "b"]);
    expect(claimValues({ groups: { devs: true } }, "groups")).toEqual([]);
    expect(roleFromClaims({ groups: { devs: true } }, "groups", MAP)).toBeUndefined();
  });

  it("VAULT_OIDC_ROLE_MAP keeps its order and refuses what is not group=role pairs", () => {
    expect(roleMap(" vault-admins=admin , devs = writer,", "VAULT_OIDC_ROLE_MAP")).toEqual(MAP);
    // The role is after the last `=`: a group name may hold `=` (not `,`, the pairs' separator).
    expect(roleMap("team=a=writer", "X")).toEqual([{ group: "team=a", role: "writer" }]);
    for (const bad of ["", "devs", "devs=", "=writer", "devs=Writer!"]) expect(() => roleMap(bad, "VAULT_OIDC_ROLE_MAP"), bad).toThrow(ConfigError);
  });
});

describe("the principal's name", () => {
  it("email, else preferred_username, else sub; cut to 128 characters", () => {
    expect(principalNameFrom({ sub: "s1", email: " a@example.com ", preferred_username: "a" })).toBe("a@example.com");
    expect(principalNameFrom({ sub: "s1", preferred_username: "ann" })).toBe("ann");
    expect(principalNameFrom({ sub: "s1", email: "" })).toBe("s1");
    expect(principalNameFrom({ sub: "x".repeat(300) })).toHaveLength(128);
  });

  it("a taken name gets the subject added, still at most 128 characters", () => {
    expect(fallbackName("ann", "s1")).toBe("ann (s1)");
    const long = fallbackName("n".repeat(128), "subject-1");
    expect(long).toHaveLength(128);
    expect(long.endsWith(" (subject-1)")).toBe(true);
  });
});

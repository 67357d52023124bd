import { Organizations } from "./orgs.js";
import { PrincipalKeys } from "./principal-keys.js";
import type { ChangeAudit } from "../events.js";
import { Principals } from "./principals.js";
import { Roles } from "./roles.js";
import type { SecretLifecycle } from "../secrets/lifecycle.js";

/** The multi-tenancy domain: orgs, their roles, principals and principal keys (docs/orgs.md). */
export interface OrgDomain {
  orgs: Organizations;
  roles: Roles;
  principals: Principals;
  principalKeys: PrincipalKeys;
}

/**
 * Builds the org domain over an open, migrated database (schema section 4).
 * @param deps.now current time, Unix milliseconds.
 * @param deps.secrets the one secret lifecycle (org secrets are its scope = org id).
 * @param deps.audit the audit log: every management change writes its row
 *   through it, in the change's transaction (docs/audit.md "Management changes").
 */
export function createOrgDomain(deps: {
  now: () => number;
  secrets: SecretLifecycle;
  audit: ChangeAudit;
}): OrgDomain {
  const roles = new Roles({ now: deps.now, audit: deps.audit });
  return {
    orgs: new Organizations({ now: deps.now, secrets: deps.secrets, audit: deps.audit }),
    roles,
    principals: new Principals({ now: deps.now, roles, audit: deps.audit }),
    principalKeys: new PrincipalKeys({ now: deps.now, roles, audit: deps.audit }),
  };
}

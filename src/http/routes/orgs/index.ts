import type { OrgDomain } from "../../../domain/orgs/org-domain.js";
import type { UnitOfWork, Work } from "../../../store/work.js";
import type { Route } from "../declare.js";
import { meRoutes } from "./me.js";
import { orgManagementRoutes } from "./orgs.js";
import { principalRoutes } from "./principals.js";
import { roleRoutes } from "./roles.js";

/** What the organization routes are built over: the org domain (organizations, roles, principals, their keys) and the unit of work. */
export interface OrgRoutesDeps extends OrgDomain {
  tx: UnitOfWork<Work>;
}

/**
 * The organization routes (docs/contract.md
 * §2, §4, §6, §8 and §9): organizations, roles, principals and their keys (master key) and /me
 * (principal keys). Org-scoped secrets, webhooks and the org audit log are
 * declared with their global twins (routes/secrets/, webhooks.ts, audit.ts).
 */
export function orgRoutes(deps: OrgRoutesDeps): Route[] {
  return [
    ...orgManagementRoutes({ orgs: deps.orgs, tx: deps.tx }),
    ...roleRoutes({ roles: deps.roles, tx: deps.tx }),
    ...principalRoutes({ principals: deps.principals, principalKeys: deps.principalKeys, tx: deps.tx }),
    ...meRoutes({ principals: deps.principals, principalKeys: deps.principalKeys, tx: deps.tx }),
  ];
}

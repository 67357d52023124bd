import type { OrgDomain } from "../../domain/org-domain.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import type { RouteDecl } from "./declare.js";
import { meRouteDecls } from "./me.js";
import { orgManagementRouteDecls } from "./orgs.js";
import { principalRouteDecls } from "./principals.js";
import { roleRouteDecls } from "./roles.js";

export interface OrgRoutesDeps extends OrgDomain {
  tx: UnitOfWork<Work>;
}

/**
 * The organization routes (docs/contract.md
 * §2, §4, §6, §8 and §9): organizations, roles, principals and their keys (master key) and /me
 * (principal keys). Org-scoped secrets, webhooks and the org audit log are
 * declared with their global twins (routes/secrets.ts, webhooks.ts, audit.ts).
 */
export function orgRouteDecls(deps: OrgRoutesDeps): RouteDecl[] {
  return [
    ...orgManagementRouteDecls({ orgs: deps.orgs, tx: deps.tx }),
    ...roleRouteDecls({ roles: deps.roles, tx: deps.tx }),
    ...principalRouteDecls({ principals: deps.principals, keys: deps.keys, tx: deps.tx }),
    ...meRouteDecls({ principals: deps.principals, keys: deps.keys, tx: deps.tx }),
  ];
}

import type { Route } from "../declare.js";
import { createRoute } from "./create.js";
import { deleteRoute } from "./delete.js";
import { listRoute } from "./list.js";
import { patchRoute } from "./patch.js";
import { pruneRoute } from "./prune.js";
import { readRoute } from "./read.js";
import { replaceRoute } from "./replace.js";
import type { SecretRouteDeps } from "./secret-route.js";
import { SECRET_SCOPES } from "./secret-route.js";

/**
 * The secret routes of both scopes (docs/api.md "Global secrets" and
 * "Replace a secret", docs/orgs.md "Org-scoped secrets"), one file per verb,
 * each built once per scope from its SecretScope: thin handlers that get
 * validated input, run one unit of work of the lifecycle and shape the answer.
 */
export function secretRoutes(deps: SecretRouteDeps): Route[] {
  return SECRET_SCOPES.flatMap((s) => [
    createRoute(deps, s),
    listRoute(deps, s),
    readRoute(deps, s),
    patchRoute(deps, s),
    replaceRoute(deps, s),
    deleteRoute(deps, s),
    pruneRoute(deps, s),
  ]);
}

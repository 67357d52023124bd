import { newId } from "../../crypto/tokens.js";
import { VaultError } from "../../model/errors.js";
import type { ChangeAudit, Origin } from "../events.js";
import { GLOBAL_SCOPE } from "../secrets/model.js";
import { cutPage } from "../paging.js";
import type { Page } from "../paging.js";
import type { SecretLifecycle } from "../secrets/lifecycle.js";
import type { Work } from "../../store/work.js";
import type { Org } from "../../model/records.js";
export type { Org } from "../../model/records.js";

/**
 * What every service of the org domain (organizations, principals, their
 * keys) is built with (org-domain.ts createOrgDomain).
 */
export interface OrgServiceDeps {
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Records the service's changes in the audit log, in the change's transaction (docs/audit.md "Management changes"). */
  audit: ChangeAudit;
}

/** Organizations record `org.created` / `org.deleted` in the global log. */
export interface OrgsDeps extends OrgServiceDeps {
  /** The one secret lifecycle, to prune an org's remains when it is deleted. */
  secrets: SecretLifecycle;
}

/**
 * Organizations (docs/contract.md §9).
 * Every method takes the unit of work's handle (store/orgs.ts has the SQL).
 */
export class Organizations {
  constructor(private readonly deps: OrgsDeps) {}

  /**
   * Creates an org. Audit: `org.created` with the org id, in the global log
   * (docs/audit.md "Management changes").
   * @param name 1-128 characters, already trimmed.
   * @param metadata a JSON object (at most 16 KiB serialized, checked at the
   *   edge); undefined: `{}`.
   * @param origin who asks (the master key), for the audit row.
   * @throws VaultError "conflict" (409) when an org has this name (docs/orgs.md).
   */
  async create(w: Work, name: string, metadata: Record<string, unknown> | undefined, origin: Origin): Promise<Org> {
    if (await w.orgs.nameTaken(name)) throw new VaultError("conflict", "an organization with this name exists");
    const org = withoutSeq(await w.orgs.insert({ id: newId("org_"), name, metadata: metadata ?? {}, createdAt: this.deps.now() }));
    await this.deps.audit.recordFor(w, origin, GLOBAL_SCOPE, "org.created", org.id);
    return org;
  }

  /** The org, or undefined. */
  async get(w: Work, orgId: string): Promise<Org | undefined> {
    const row = await w.orgs.byId(orgId);
    return row ? withoutSeq(row) : undefined;
  }

  /** True when the org exists (org-auth.ts's OrgLookup). */
  async exists(w: Work, orgId: string): Promise<boolean> {
    return (await w.orgs.byId(orgId)) !== undefined;
  }

  /** One page of orgs in creation order; `limit` 1-1000. */
  async list(w: Work, limit: number, afterId = 0): Promise<Page<Org>> {
    const { rows, next } = cutPage(await w.orgs.page(afterId, limit + 1), limit, (row) => row.seq);
    return { items: rows.map(withoutSeq), nextAfterId: next };
  }

  /**
   * Deletes an org that holds nothing any more (docs/contract.md §9, no
   * cascading deletes). Expired tombstones of its secrets are pruned through
   * the secret lifecycle first (a secret past its TTL is expired there, with
   * its `secret.expired` event). Audit: `org.deleted` with the org id, in the
   * global log (the org's own log is no longer readable through the API).
   * @throws VaultError "not_found" (404) for an unknown org; "conflict" (409)
   *   when principals, live secrets, custom roles or webhooks remain: the
   *   message names them.
   */
  async remove(w: Work, orgId: string, origin: Origin): Promise<void> {
    if (!(await this.exists(w, orgId))) throw new VaultError("not_found", "organization not found");
    const dependents = await w.orgs.dependents(orgId, this.deps.now());
    const remaining: string[] = [];
    if (dependents.principals) remaining.push("principals");
    if (dependents.liveSecrets) remaining.push("secrets");
    if (dependents.customRoles) remaining.push("custom roles");
    if (dependents.webhooks) remaining.push("webhooks");
    if (remaining.length > 0) {
      throw new VaultError("conflict", "the organization is not empty", {
        message: `delete its ${remaining.join(", ")} first; deletes do not cascade`,
      });
    }
    if (dependents.anySecretRow) await this.deps.secrets.prune(w, orgId, origin);
    await w.orgs.remove(orgId);
    await this.deps.audit.recordFor(w, origin, GLOBAL_SCOPE, "org.deleted", orgId);
  }
}

/** A stored org without its list position. */
function withoutSeq(row: Org & { seq: number }): Org {
  const { seq: _seq, ...org } = row;
  return org;
}

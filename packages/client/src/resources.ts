import { seg } from "./http.js";
import type { Transport } from "./http.js";
import type { AuditQuery, BodyOf, PageOptions, ResponseOf } from "./types.js";

/**
 * The resource groups of VaultClient besides the secret verbs: scoped keys,
 * audit, webhooks (and their deliveries), orgs (principals, roles, principal
 * keys, org audit, org webhooks, org prune), and /me. Each method is one
 * request; every one rejects with VaultApiError (status >= 400) or
 * VaultConnectionError (no response), or, before sending anything, with
 * VaultInputError for an id or name that is empty, `.` or `..` (see seg()).
 * Paths: docs/api.md.
 */

/** Scoped API keys, /keys (master key or an admin scoped key). */
export class KeysApi {
  constructor(private readonly t: Transport) {}

  /** POST /keys: `{name, permissions, prefix?, expires_at?}` -> 201 with the token (shown once). */
  create(body: BodyOf<"/keys", "post">): Promise<ResponseOf<"/keys", "post", 201>> {
    return this.t.json({ method: "POST", path: "/keys", body });
  }

  /** GET /keys: a page of keys, tokens redacted. */
  list(page: PageOptions = {}): Promise<ResponseOf<"/keys", "get">> {
    return this.t.json({ method: "GET", path: "/keys", query: { ...page } });
  }

  /** DELETE /keys/{id}: revoke at once (later requests with it get 401). */
  async delete(id: string): Promise<ResponseOf<"/keys/{id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `/keys/${seg(id)}` });
  }
}

/** The global audit log, GET /audit (master key or an admin scoped key). */
export class AuditApi {
  constructor(private readonly t: Transport) {}

  /** GET /audit: entries matching the filters (times in Unix seconds), newest page first per the server. */
  list(query: AuditQuery = {}): Promise<ResponseOf<"/audit", "get">> {
    return this.t.json({ method: "GET", path: "/audit", query: { ...query } });
  }
}

/** Webhooks under a base path: /webhooks, or /orgs/{org_id}/webhooks. */
export class WebhooksApi {
  constructor(
    private readonly t: Transport,
    private readonly base: string,
  ) {}

  /** POST: `{url (https), events (["*"] for all), description?}` -> 201 the webhook with its signing `secret` (shown only here). */
  create(body: BodyOf<"/webhooks", "post">): Promise<ResponseOf<"/webhooks", "post", 201>> {
    return this.t.json({ method: "POST", path: this.base, body });
  }

  /** GET: a page of webhooks. */
  list(page: PageOptions = {}): Promise<ResponseOf<"/webhooks", "get">> {
    return this.t.json({ method: "GET", path: this.base, query: { ...page } });
  }

  /** DELETE /{id}: no more events are delivered to it. */
  async delete(id: string): Promise<ResponseOf<"/webhooks/{id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `${this.base}/${seg(id)}` });
  }

  /**
   * POST /{id}/rotate: a new signing secret, in the answer (`secret`, shown
   * only here); for 24 hours deliveries are signed with the new and the
   * previous one.
   */
  rotate(id: string): Promise<ResponseOf<"/webhooks/{id}/rotate", "post">> {
    return this.t.json({ method: "POST", path: `${this.base}/${seg(id)}/rotate` });
  }

  /** GET /{id}/deliveries: a page of delivery attempts, newest first. */
  async deliveries(id: string, page: PageOptions = {}): Promise<ResponseOf<"/webhooks/{id}/deliveries", "get">> {
    return this.t.json({ method: "GET", path: `${this.base}/${seg(id)}/deliveries`, query: { ...page } });
  }
}

/** Roles of one org, /orgs/{org_id}/roles (master key). */
export class RolesApi {
  constructor(
    private readonly t: Transport,
    private readonly base: string,
  ) {}

  /** POST: `{name, permissions}` (a string of permission letters) -> 201. */
  create(body: BodyOf<"/orgs/{org_id}/roles", "post">): Promise<ResponseOf<"/orgs/{org_id}/roles", "post", 201>> {
    return this.t.json({ method: "POST", path: this.base, body });
  }

  /** GET: built-in and custom roles. */
  list(): Promise<ResponseOf<"/orgs/{org_id}/roles", "get">> {
    return this.t.json({ method: "GET", path: this.base });
  }

  /** PATCH /{name}: new permissions of a custom role (built-ins refuse). */
  async update(
    name: string,
    body: BodyOf<"/orgs/{org_id}/roles/{name}", "patch">,
  ): Promise<ResponseOf<"/orgs/{org_id}/roles/{name}", "patch">> {
    return this.t.json({ method: "PATCH", path: `${this.base}/${seg(name)}`, body });
  }

  /** DELETE /{name}: a custom role (built-ins refuse). */
  async delete(name: string): Promise<ResponseOf<"/orgs/{org_id}/roles/{name}", "delete">> {
    return this.t.json({ method: "DELETE", path: `${this.base}/${seg(name)}` });
  }
}

/** Principals of one org and their keys, /orgs/{org_id}/principals (master key). */
export class PrincipalsApi {
  constructor(
    private readonly t: Transport,
    private readonly base: string,
  ) {}

  /** POST: `{name, role, metadata?}` -> 201 the principal. */
  create(
    body: BodyOf<"/orgs/{org_id}/principals", "post">,
  ): Promise<ResponseOf<"/orgs/{org_id}/principals", "post", 201>> {
    return this.t.json({ method: "POST", path: this.base, body });
  }

  /** GET: a page of principals. */
  list(page: PageOptions = {}): Promise<ResponseOf<"/orgs/{org_id}/principals", "get">> {
    return this.t.json({ method: "GET", path: this.base, query: { ...page } });
  }

  /** GET /{id}: one principal. */
  async get(id: string): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}", "get">> {
    return this.t.json({ method: "GET", path: `${this.base}/${seg(id)}` });
  }

  /** PATCH /{id}: new name, role or metadata. */
  async update(
    id: string,
    body: BodyOf<"/orgs/{org_id}/principals/{id}", "patch">,
  ): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}", "patch">> {
    return this.t.json({ method: "PATCH", path: `${this.base}/${seg(id)}`, body });
  }

  /** DELETE /{id}: refused while the principal has keys. */
  async delete(id: string): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `${this.base}/${seg(id)}` });
  }

  /** POST /{id}/keys: `{name, valid_after?, valid_before?}` (Unix seconds) -> 201 with `key` (shown once). */
  async createKey(
    id: string,
    body: BodyOf<"/orgs/{org_id}/principals/{id}/keys", "post">,
  ): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}/keys", "post", 201>> {
    return this.t.json({ method: "POST", path: `${this.base}/${seg(id)}/keys`, body });
  }

  /** GET /{id}/keys: the principal's key summaries. */
  async listKeys(id: string): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}/keys", "get">> {
    return this.t.json({ method: "GET", path: `${this.base}/${seg(id)}/keys` });
  }

  /** DELETE /{id}/keys/{key_id}: revoke a principal key at once. */
  async deleteKey(id: string, keyId: string): Promise<ResponseOf<"/orgs/{org_id}/principals/{id}/keys/{key_id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `${this.base}/${seg(id)}/keys/${seg(keyId)}` });
  }
}

/** One org's sub-resources: `client.orgs.of(orgId)`. */
export class OrgApi {
  readonly principals: PrincipalsApi;
  readonly roles: RolesApi;
  readonly webhooks: WebhooksApi;
  readonly #base: string;

  constructor(
    private readonly t: Transport,
    readonly orgId: string,
  ) {
    this.#base = `/orgs/${seg(orgId)}`;
    this.principals = new PrincipalsApi(t, `${this.#base}/principals`);
    this.roles = new RolesApi(t, `${this.#base}/roles`);
    this.webhooks = new WebhooksApi(t, `${this.#base}/webhooks`);
  }

  /** GET /orgs/{org_id}/audit [a]: the org's audit entries (times in Unix seconds). */
  audit(query: AuditQuery = {}): Promise<ResponseOf<"/orgs/{org_id}/audit", "get">> {
    return this.t.json({ method: "GET", path: `${this.#base}/audit`, query: { ...query } });
  }

  /** POST /orgs/{org_id}/prune [C]: remove the org's expired secrets; `{pruned}`. */
  prune(): Promise<ResponseOf<"/orgs/{org_id}/prune", "post">> {
    return this.t.json({ method: "POST", path: `${this.#base}/prune` });
  }
}

/** Organizations, /orgs (master key), and each org's principals, roles, webhooks and audit. */
export class OrgsApi {
  constructor(private readonly t: Transport) {}

  /** POST /orgs: `{name, metadata?}` -> 201 the org. */
  create(body: BodyOf<"/orgs", "post">): Promise<ResponseOf<"/orgs", "post", 201>> {
    return this.t.json({ method: "POST", path: "/orgs", body });
  }

  /** GET /orgs: a page of orgs. */
  list(page: PageOptions = {}): Promise<ResponseOf<"/orgs", "get">> {
    return this.t.json({ method: "GET", path: "/orgs", query: { ...page } });
  }

  /** GET /orgs/{org_id}: one org. */
  async get(orgId: string): Promise<ResponseOf<"/orgs/{org_id}", "get">> {
    return this.t.json({ method: "GET", path: `/orgs/${seg(orgId)}` });
  }

  /** DELETE /orgs/{org_id}: refused while the org has principals. */
  async delete(orgId: string): Promise<ResponseOf<"/orgs/{org_id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `/orgs/${seg(orgId)}` });
  }

  /** The sub-resources of one org: principals (and their keys), roles, webhooks, audit, prune. */
  of(orgId: string): OrgApi {
    return new OrgApi(this.t, orgId);
  }
}

/** The calling principal, /me (a principal key). */
export class MeApi {
  constructor(private readonly t: Transport) {}

  /** GET /me: the principal with its metadata and key summaries. */
  get(): Promise<ResponseOf<"/me", "get">> {
    return this.t.json({ method: "GET", path: "/me" });
  }

  /** PATCH /me: `{metadata}`. */
  update(body: BodyOf<"/me", "patch">): Promise<ResponseOf<"/me", "patch">> {
    return this.t.json({ method: "PATCH", path: "/me", body });
  }

  /** POST /me/keys: `{name, valid_after?, valid_before?}` (Unix seconds) -> 201 with `key` (shown once). */
  createKey(body: BodyOf<"/me/keys", "post">): Promise<ResponseOf<"/me/keys", "post", 201>> {
    return this.t.json({ method: "POST", path: "/me/keys", body });
  }

  /** GET /me/keys: the principal's own key summaries. */
  listKeys(): Promise<ResponseOf<"/me/keys", "get">> {
    return this.t.json({ method: "GET", path: "/me/keys" });
  }

  /** DELETE /me/keys/{key_id}: revoke one of the principal's keys at once. */
  async deleteKey(keyId: string): Promise<ResponseOf<"/me/keys/{key_id}", "delete">> {
    return this.t.json({ method: "DELETE", path: `/me/keys/${seg(keyId)}` });
  }
}

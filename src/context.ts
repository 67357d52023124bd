import type { Context } from "hono";
import type { Origin } from "./domain/events.js";
import type { Permission } from "./domain/permissions.js";

/**
 * Who is calling, decided once per request by auth.ts from the bearer token
 * (interface section 5): the master key, a scoped API key (global routes), or
 * a principal key (its org's routes and /me).
 */
export type Actor =
  | { kind: "master" }
  | { kind: "scoped"; keyId: string; permissions: Permission[]; prefix: string | null }
  | { kind: "principal"; keyId: string; principalId: string; orgId: string; role: string; letters: string };

/** Answers whether an organization exists (domain/orgs.ts); used by org-auth.ts. */
export interface OrgLookup {
  exists(orgId: string): boolean;
}

/** The Hono environment of the app: what middleware puts on the context. */
export interface AppEnv {
  Variables: {
    actor: Actor;
    /** Organization lookup for the org routes (set by createApp, read by org-auth.ts). */
    orgs: OrgLookup;
    /** Client ip (socket, or X-Forwarded-For when VAULT_TRUST_PROXY). */
    ip: string | null;
    requestId: string;
    /** The request's audit origin, made once by originOf() (the access guard asks the audit log about it). */
    origin?: Origin;
    /**
     * The audit action the route declares for a scoped-key request whose
     * handler records none (routes/declare.ts, need()); read by the access guard.
     */
    auditAction?: string;
  };
}

export type AppContext = Context<AppEnv>;

/**
 * The audit origin of the current request. Made once per request and kept
 * on the context: the same object reaches the audit log through every
 * change, so the access guard can tell whether the request was audited.
 */
export function originOf(c: AppContext): Origin {
  const known = c.get("origin");
  if (known !== undefined) return known;
  const origin = originFor(c.get("actor"), c.get("ip") ?? null);
  c.set("origin", origin);
  return origin;
}

function originFor(actor: Actor, ip: string | null): Origin {
  switch (actor.kind) {
    case "master":
      return { actor: "master", principalId: null, ip };
    case "scoped":
      return { actor: actor.keyId, principalId: null, ip };
    case "principal":
      return { actor: actor.keyId, principalId: actor.principalId, ip };
  }
}

import type { Context } from "hono";
import type { Origin } from "../domain/events.js";
import type { Permission } from "../domain/permissions.js";

/**
 * Who is calling, decided once per request by auth.ts from the bearer token
 * (docs/contract.md §8): the master key, a scoped API key (global routes), or
 * a principal key (its org's routes and /me).
 */
export type Actor =
  | { kind: "master" }
  | { kind: "scoped"; keyId: string; permissions: Permission[]; prefix: string | null }
  | { kind: "principal"; keyId: string; principalId: string; orgId: string; role: string; letters: string }
  /** VAULT_METRICS_TOKEN: may read GET /metrics and nothing else. */
  | { kind: "metrics" };

/** The Hono environment of the app: what middleware puts on the context. */
export interface AppEnv {
  Variables: {
    actor: Actor;
    /** Client ip (socket, or X-Forwarded-For when VAULT_TRUST_PROXY). */
    ip: string | null;
    requestId: string;
    /** The request's audit origin and record, made once by the front middleware (front.ts). */
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
 * The audit origin of the current request: its explicit audit record, made
 * once per request by the front middleware (front.ts) right after
 * authentication and kept on the context. The same object reaches the audit
 * log through every change the handler makes, which marks it `recorded`;
 * the front middleware then completes the record (access-guard.ts).
 * @throws Error when called before authentication (a programming error).
 */
export function originOf(c: AppContext): Origin {
  const origin = c.get("origin");
  if (origin === undefined) throw new Error("originOf() before authentication");
  return origin;
}

/**
 * The origin of a request made by `actor` from `ip`, not yet audited
 * (`recorded: false`).
 */
export function originFor(actor: Actor, ip: string | null): Origin {
  switch (actor.kind) {
    case "master":
      return { actor: "master", principalId: null, ip, recorded: false };
    case "scoped":
      return { actor: actor.keyId, principalId: null, ip, recorded: false };
    case "principal":
      return { actor: actor.keyId, principalId: actor.principalId, ip, recorded: false };
    case "metrics":
      return { actor: "metrics", principalId: null, ip, recorded: false };
  }
}

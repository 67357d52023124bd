import type { Context } from "hono";
import type { Origin } from "./domain/events.js";

/** Scoped API key permissions (interface section 5). */
export type Permission = "read" | "write" | "delete" | "admin";

/**
 * Who is calling, decided once per request by auth.ts from the bearer token
 * (interface section 5): the master key, a scoped API key (global routes), or
 * a principal key (its org's routes and /me).
 */
export type Actor =
  | { kind: "master" }
  | { kind: "scoped"; keyId: string; permissions: Permission[]; prefix: string | null }
  | { kind: "principal"; keyId: string; principalId: string; orgId: string; role: string; letters: string };

/** The Hono environment of the app: what middleware puts on the context. */
export interface AppEnv {
  Variables: {
    actor: Actor;
    /** Client ip (socket, or X-Forwarded-For when VAULT_TRUST_PROXY). */
    ip: string | null;
    requestId: string;
  };
}

export type AppContext = Context<AppEnv>;

/** The audit origin of the current request. */
export function originOf(c: AppContext): Origin {
  const actor = c.get("actor");
  const ip = c.get("ip") ?? null;
  switch (actor.kind) {
    case "master":
      return { actor: "master", principalId: null, ip };
    case "scoped":
      return { actor: actor.keyId, principalId: null, ip };
    case "principal":
      return { actor: actor.keyId, principalId: actor.principalId, ip };
  }
}

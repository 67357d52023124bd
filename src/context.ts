import type { Context } from "hono";
import type { Origin } from "./domain/events.js";

/** Who is calling, decided once per request by auth.ts from the bearer token. */
export type Actor = { kind: "master" };

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
  return { actor: actor.kind === "master" ? "master" : null, principalId: null, ip: c.get("ip") ?? null };
}

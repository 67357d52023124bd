import type { IncomingMessage } from "node:http";
import type { Hono, MiddlewareHandler } from "hono";
import type { Actor, AppEnv } from "../../context.js";
import type { Caps } from "./session.js";

/** Where a console action's API call comes from: the browser's address, as the front middleware derives it. */
export interface CallerAddress {
  /** The socket's address. */
  socket: string | null;
  /** The trusted proxy's X-Forwarded-For entry, when VAULT_TRUST_PROXY is set and it sent one. */
  forwarded: string | undefined;
}

/** An API answer as the console uses it: status and parsed JSON body (null for none). */
export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
  /** The raw text, for an NDJSON export. */
  text: string;
}

/** The in-process path the sign-in probe calls (answered by probeMiddleware only for in-process calls; a JSON 404 otherwise). */
export const PROBE_PATH = "/__console_probe";

interface ProbeEnv {
  incoming: IncomingMessage;
  consoleProbe?: { actor?: Actor; quiet: boolean };
}

/**
 * The request environment of an in-process call: a stand-in for Node's
 * IncomingMessage holding the call's headers and the browser's address, so
 * the front middleware authenticates the call, counts a 401 against the
 * brute-force guard and records the address in the audit log exactly as for
 * a direct API request.
 */
function envFor(headers: Record<string, string>, from: CallerAddress): ProbeEnv {
  const all: Record<string, string> = { ...headers };
  if (from.forwarded !== undefined) all["x-forwarded-for"] = from.forwarded;
  const incoming = { headers: all, socket: { remoteAddress: from.socket ?? undefined } } as unknown as IncomingMessage;
  return { incoming };
}

/**
 * Calls the vault's own API in process with `token` as the bearer token
 * (docs/console.md, "Authorization"): the front middleware, the route
 * declarations and their permission checks, the audit log and the
 * brute-force guard all apply unchanged; the console renders the answer.
 * @param body a JSON body, or undefined for none.
 */
export async function callApi(
  app: Hono<AppEnv>,
  token: string,
  from: CallerAddress,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await app.fetch(new Request(`http://vault.internal${path}`, init), envFor(headers, from));
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = text === "" ? {} : JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // NDJSON or empty: the caller uses `text`.
  }
  return { status: res.status, body: parsed, text };
}

/**
 * Resolves `token` the way every API request is resolved (the front
 * middleware and its token resolvers), through an in-process call of
 * PROBE_PATH: the actor it authenticates as, or the API's refusal (401, 429).
 * A scoped key's sign-in is audited as the access guard records any request
 * (`request`); `quiet`, for the re-check of every later console request,
 * records no row (the API calls the page then makes are recorded).
 */
export async function probeToken(
  app: Hono<AppEnv>,
  token: string,
  from: CallerAddress,
  quiet = false,
): Promise<{ caps: Caps } | { refused: ApiAnswer }> {
  const headers = { authorization: `Bearer ${token}` };
  const env = envFor(headers, from);
  env.consoleProbe = { quiet };
  const res = await app.fetch(new Request(`http://vault.internal${PROBE_PATH}`, { headers }), env);
  const actor = env.consoleProbe.actor;
  if (res.status !== 204 || actor === undefined || actor.kind === "metrics") {
    const text = await res.text();
    let body: Record<string, unknown> = { error: "this token cannot sign in to the console" };
    try {
      if (res.status !== 204) body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // keep the default
    }
    return { refused: { status: res.status === 204 ? 403 : res.status, body, text } };
  }
  return { caps: capsOf(actor) };
}

function capsOf(actor: Exclude<Actor, { kind: "metrics" }>): Caps {
  const caps: Caps = { kind: "master", keyId: null, permissions: [], prefix: null, orgId: null, principalId: null, role: null, letters: "" };
  if (actor.kind === "scoped") return Object.assign(caps, { kind: "scoped", keyId: actor.keyId, permissions: actor.permissions, prefix: actor.prefix });
  if (actor.kind === "principal") {
    return Object.assign(caps, { kind: "principal", keyId: actor.keyId, orgId: actor.orgId, principalId: actor.principalId, role: actor.role, letters: actor.letters });
  }
  return caps;
}

/**
 * After the front middleware: answers an in-process sign-in probe (an
 * environment carrying `consoleProbe`, which only probeToken builds) with
 * 204, handing back the authenticated actor. Any other request passes on.
 */
export const probeMiddleware: MiddlewareHandler<AppEnv> = async (c, next) => {
  const probe = (c.env as Partial<ProbeEnv> | undefined)?.consoleProbe;
  if (probe === undefined || c.req.path !== PROBE_PATH) return next();
  probe.actor = c.get("actor");
  const origin = c.get("origin");
  if (probe.quiet && origin !== undefined) origin.recorded = true;
  return c.body(null, 204);
};

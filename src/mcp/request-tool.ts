import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { SecretRequest, VaultClient } from "@ephemeral-vault/client";
import { failure, result } from "./tool-kit.js";

/**
 * request_secret (docs/mcp.md, "request_secret"): the agent asks a person
 * for a secret (docs/requests.md). The key pair is made in this server; the
 * private key stays in its memory (RequestKeyring), never in a tool's
 * answer, so the model gets the link to send and the request's id, and the
 * answer reaches a command through run_command's `request:<id>`, masked,
 * never the model.
 */

/** The private keys of the requests this server made, by request id: in memory only, gone when it stops. */
export class RequestKeyring {
  readonly #keys = new Map<string, string>();

  /** Keeps the private key of request `id`. */
  set(id: string, privateKey: string): void {
    this.#keys.set(id, privateKey);
  }

  /** The private key of request `id`, or undefined when this server did not make it (or its answer is spent). */
  get(id: string): string | undefined {
    return this.#keys.get(id);
  }

  /** Forgets request `id` (its answer's last read is spent, or it is gone). */
  delete(id: string): void {
    this.#keys.delete(id);
  }
}

const REQUEST_REF = /^request:([0-9a-f]{64})$/;

/**
 * The request id of a run_command `env` value `request:<64 hex id>`, or
 * undefined for any other value (a secret key). A secret key of exactly that
 * form cannot be named through run_command (docs/mcp.md).
 */
export function requestRef(key: string): string | undefined {
  return REQUEST_REF.exec(key)?.[1];
}

/** request_secret's input: a new request (description), or the status of one (request_id). */
export const requestInput = {
  description: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe("What you ask for, shown to the person asked, e.g. \"the staging database password\". Makes a new request."),
  ttl_seconds: z.number().int().positive().max(2_592_000).optional().describe("Seconds the request (then its answer) lives; default 604800 (7 days), at most 30 days."),
  request_id: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe("The id of a request this tool made: returns whether it was answered, instead of making a new one."),
};

/** request_secret's result. */
export const requestOutput = {
  request_id: z.string(),
  url: z.string().describe("The link to send to the person who has the secret (they answer in their browser)."),
  state: z.enum(["open", "answered"]),
  expires_at: z.number().describe("Unix seconds."),
  answered_at: z.number().nullable(),
  key_held: z.boolean().describe("Whether this server holds the request's private key (run_command can then use the answer)."),
  use: z.string().describe("How to give the answer to a command."),
};

/** What the model is told about using the answer: never the answer itself. */
function useHint(id: string, state: "open" | "answered", held: boolean): string {
  if (!held) return "this server does not hold the private key of this request: it cannot read the answer";
  const env = `run_command with env {"NAME": "request:${id}"}`;
  return state === "answered" ? `answered: ${env} gives the answer to the command (masked in its output)` : `not answered yet: send the url, call request_secret with request_id later; once answered, ${env}`;
}

/** The tool's answer for one request (never the private key, never the answer). */
function describeRequest(request: SecretRequest, keyring: RequestKeyring): CallToolResult {
  const held = keyring.get(request.id) !== undefined;
  return result({
    request_id: request.id,
    url: request.url,
    state: request.state,
    expires_at: request.expires_at,
    answered_at: request.answered_at,
    key_held: held,
    use: useHint(request.id, request.state, held),
  });
}

/**
 * The body of request_secret: with `request_id`, the request's state (GET
 * /requests/<id>: nothing read); otherwise a new request (client request():
 * the key pair made here, the private key kept in `keyring`).
 */
export async function requestSecret(
  client: VaultClient,
  keyring: RequestKeyring,
  input: { description?: string | undefined; ttl_seconds?: number | undefined; request_id?: string | undefined },
): Promise<CallToolResult> {
  if (input.request_id !== undefined) {
    if (input.description !== undefined) return failure("give description (a new request) or request_id (its status), not both");
    return describeRequest(await client.requests.get(input.request_id), keyring);
  }
  if (input.description === undefined) return failure("give description: what you ask the person for (or request_id for the status of a request)");
  const made = await client.request({ description: input.description, ...(input.ttl_seconds === undefined ? {} : { ttlSeconds: input.ttl_seconds }) });
  keyring.set(made.id, made.privateKey);
  return describeRequest(made.request, keyring);
}

/**
 * The answers run_command was asked for (`env` values `request:<id>`),
 * checked before anything is read: each request was made by this server
 * (its key is held) and is answered (GET /requests/<id>: nothing read).
 * @returns a tool error to answer, or undefined when all are ready.
 */
export async function checkAnswers(client: VaultClient, keyring: RequestKeyring, ids: ReadonlySet<string>): Promise<CallToolResult | undefined> {
  for (const id of ids) {
    if (keyring.get(id) === undefined) return failure(`not run: request ${id} was not made by this server (or its answer is spent): its private key is not here`);
    const request = await client.requests.get(id);
    if (request.state !== "answered") return failure(`not run: request ${id} is not answered yet (nothing was read)`);
  }
  return undefined;
}

/**
 * Reads each answer once (client readAnswer: the read counts, the last one
 * burns it, and the key is then forgotten).
 * @returns request id -> the answer, byte-exact; a tool error when one is no longer there.
 */
export async function readAnswers(client: VaultClient, keyring: RequestKeyring, ids: ReadonlySet<string>): Promise<Map<string, string> | CallToolResult> {
  const answers = new Map<string, string>();
  for (const id of ids) {
    const privateKey = keyring.get(id);
    const read = privateKey === undefined ? undefined : await client.readAnswer(id, privateKey);
    if (read === undefined) return failure(`not run: request ${id} has no answer to read`);
    if (read.spent) keyring.delete(id);
    answers.set(id, read.value);
  }
  return answers;
}

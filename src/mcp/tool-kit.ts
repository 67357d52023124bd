import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import { describeFailure } from "@ephemeral-vault/client";
import { ConfigError } from "../config.js";

/** Input field: seconds until expiry. */
export const ttlSeconds = z
  .number()
  .int()
  .positive()
  .optional()
  .describe("Seconds until the secret expires (e.g. 3600 for one hour). Omit for no expiry.");
/** Input field: reads before the secret burns. */
export const maxReads = z.number().int().positive().optional().describe("Number of reads after which the secret is burned. Omit for unlimited reads.");
/** Input field: a secret key. */
export const key = z
  .string()
  .min(1)
  .describe(
    'The secret\'s key, e.g. "prod/db_password": no leading or trailing "/" and no empty, "." or ".." segment (refused). A prefix-scoped token only reaches keys under its prefix.',
  );

/** One secret's metadata as the vault lists it (never a value). */
export const secretMeta = z.looseObject({
  key: z.string().optional(),
  id: z.string().optional(),
  read_count: z.number(),
  max_reads: z.number().nullable(),
  created_at: z.number(),
  expires_at: z.number().nullable(),
});

/** The TTL and read limit of a tool input, as the client takes them (seconds). */
export function limits(input: { ttl_seconds?: number | undefined; max_reads?: number | undefined }): { ttlSeconds?: number; maxReads?: number } {
  return {
    ...(input.ttl_seconds === undefined ? {} : { ttlSeconds: input.ttl_seconds }),
    ...(input.max_reads === undefined ? {} : { maxReads: input.max_reads }),
  };
}

/**
 * A successful result: `structured` as structuredContent (checked against
 * the tool's outputSchema by the SDK) and, for clients that read only
 * text, the same as JSON text.
 */
export function result(structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A tool error (isError: true) with `message`: never a value or token. */
export function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * Runs a tool body; API refusals, an unreachable vault, a key the client
 * refuses and a usage problem (ConfigError) become tool errors with their
 * message (docs/mcp.md); anything else is logged on stderr and answered
 * with a generic tool error.
 */
export async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof ConfigError) return failure(err.message);
    const described = describeFailure(err);
    if (described === null) {
      process.stderr.write(`ephemeral-vault mcp: ${err instanceof Error ? err.message : String(err)}\n`);
      return failure("internal error in the MCP server (see its stderr)");
    }
    return failure(described.message);
  }
}

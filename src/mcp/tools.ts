import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { VaultClient } from "../client/index.js";
import { describeFailure } from "../cli/client-call.js";

const ttlSeconds = z
  .number()
  .int()
  .positive()
  .optional()
  .describe("Seconds until the secret expires (e.g. 3600 for one hour). Omit for no expiry.");
const maxReads = z.number().int().positive().optional().describe("Number of reads after which the secret is burned. Omit for unlimited reads.");
const key = z
  .string()
  .min(1)
  .describe(
    'The secret\'s key, e.g. "prod/db_password": no leading or trailing "/" and no empty, "." or ".." segment (refused). A prefix-scoped token only reaches keys under its prefix.',
  );

/**
 * Registers the six vault tools on an MCP server: get_secret, put_secret,
 * share_secret, list_secrets, delete_secret, patch_secret. Each calls the
 * HTTP API through `client` (an org client acts on that org's secrets); an API
 * refusal or an unreachable vault comes back as a tool error (isError) whose
 * text is the API's message and status, never as a protocol error; so does a
 * key the client refuses to send (an empty, `.` or `..` segment: docs/mcp.md).
 */
export function registerVaultTools(server: McpServer, client: VaultClient): void {
  server.registerTool(
    "get_secret",
    {
      title: "Read a secret",
      description:
        "Read the value of a secret by its key. Every call counts as a read: a secret with a read limit is burned (deleted) when the limit is reached, so read a secret once and keep the value for the task instead of reading it again. Errors: 404 when the key does not exist, expired or was burned; 410 when sealed; 403 outside the token's prefix.",
      inputSchema: { key },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) => guarded(async () => text((await client.get(input.key)).value)),
  );
  server.registerTool(
    "put_secret",
    {
      title: "Store a secret",
      description:
        "Store a secret value under a key, optionally expiring after ttl_seconds and/or burned after max_reads reads. Returns a confirmation, never the value. Errors: 409 when an org secret with that key exists; 402 at the free-tier limit; 403 outside the token's prefix or permissions.",
      inputSchema: { key, value: z.string().describe("The secret value, stored exactly as given."), ttl_seconds: ttlSeconds, max_reads: maxReads },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        await client.put(input.key, input.value, limits(input));
        return text(`stored ${input.key}`);
      }),
  );
  server.registerTool(
    "share_secret",
    {
      title: "Share a one-time secret link",
      description:
        "Make a public dead drop for a value: no key, readable by anyone who has the returned url, burned after max_reads reads (default 1). Returns JSON {url, id}; give the url to the recipient and do not open it yourself (opening it counts as the read).",
      inputSchema: {
        value: z.string().describe("The value to share."),
        ttl_seconds: ttlSeconds,
        max_reads: maxReads.describe("Number of reads before the link stops working (default 1)."),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        const shared = await client.share(input.value, { maxReads: 1, ...limits(input) });
        return text(JSON.stringify({ url: shared.url, id: shared.id }));
      }),
  );
  server.registerTool(
    "list_secrets",
    {
      title: "List secrets",
      description:
        "List the secrets the token can see, as JSON metadata (key, read_count, max_reads, created_at, expires_at in Unix seconds). Never returns values and does not count as a read. Use prefix to narrow, e.g. \"prod/\".",
      inputSchema: { prefix: z.string().optional().describe("Only keys starting with this prefix.") },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        const entries: unknown[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.list({ ...(input.prefix === undefined ? {} : { prefix: input.prefix }), ...(cursor === undefined ? {} : { cursor }) });
          entries.push(...page.secrets);
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        return text(JSON.stringify({ secrets: entries }));
      }),
  );
  server.registerTool(
    "delete_secret",
    {
      title: "Delete a secret",
      description: "Delete a secret by its key, at once and for good. Errors: 404 when it does not exist; 403 outside the token's prefix or permissions.",
      inputSchema: { key },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        await client.delete(input.key);
        return text(`deleted ${input.key}`);
      }),
  );
  server.registerTool(
    "patch_secret",
    {
      title: "Change a secret's expiry or read limit",
      description:
        "Set a new TTL (ttl_seconds from now) and/or a new read limit (max_reads; the read count starts again at 0) for an existing secret. Give at least one of them. Errors: 404 when it does not exist; 400 for bad values.",
      inputSchema: { key, ttl_seconds: ttlSeconds, max_reads: maxReads },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        if (input.ttl_seconds === undefined && input.max_reads === undefined) return failure("give ttl_seconds or max_reads");
        await client.patch(input.key, limits(input));
        return text(`updated ${input.key}`);
      }),
  );
}

function limits(input: { ttl_seconds?: number | undefined; max_reads?: number | undefined }): { ttlSeconds?: number; maxReads?: number } {
  return {
    ...(input.ttl_seconds === undefined ? {} : { ttlSeconds: input.ttl_seconds }),
    ...(input.max_reads === undefined ? {} : { maxReads: input.max_reads }),
  };
}

function text(content: string): CallToolResult {
  return { content: [{ type: "text", text: content }] };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** Runs a tool body; API refusals and connection failures become tool errors. */
async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (err) {
    const described = describeFailure(err);
    if (described === null) {
      process.stderr.write(`ephemeral-vault mcp: ${err instanceof Error ? err.message : String(err)}\n`);
      return failure("internal error in the MCP server (see its stderr)");
    }
    return failure(described.message);
  }
}

import type { McpServer, ToolCallback } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ShapeOutput, ZodRawShapeCompat } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { VaultClient } from "@ephemeral-vault/client";
import { prefixPath } from "../inject/env-names.js";
import type { Capabilities } from "./capabilities.js";
import type { McpOptions } from "./options.js";
import { registerHttpRequest } from "./http-tool.js";
import { RequestKeyring, requestInput, requestOutput, requestSecret } from "./request-tool.js";
import { registerRunCommand } from "./run-tool.js";
import { failure, guarded, key, limits, maxReads, result, secretMeta, ttlSeconds } from "./tool-kit.js";

/** What a tool declares: shown to the agent as is (docs/mcp.md "Tools"). */
interface ToolConfig<I extends ZodRawShapeCompat, O extends ZodRawShapeCompat> {
  title: string;
  description: string;
  inputSchema: I;
  outputSchema: O;
  annotations: ToolAnnotations;
}

// Re-exported for mcp/server.ts: the options live in options.ts (run-tool.ts needs them too).
export type { McpOptions } from "./options.js";

/**
 * Registers the vault's tools (docs/mcp.md, "Tools"): by default none
 * returns a secret value. list_secrets, secret_info, put_secret,
 * share_secret, request_secret, patch_secret, delete_secret, run_command (with
 * `--allow-command`) and http_request (with `--allow-host`) are offered
 * when the token may use them (`caps`,
 * probed at start); get_secret only with `--allow-reveal`. Every tool has an
 * outputSchema and answers structuredContent (and the same as JSON text); an
 * API refusal or an unreachable vault is a tool error (isError) with the
 * API's message and status, never a protocol error.
 * @returns the names of the tools registered.
 */
export function registerVaultTools(server: McpServer, options: McpOptions, caps: Capabilities): string[] {
  const { client } = options;
  const names: string[] = [];
  /** Registers tool `name`, its body guarded (tool-kit.ts guarded: failures become tool errors), and lists it in `names`. */
  const offer = <I extends ZodRawShapeCompat, O extends ZodRawShapeCompat>(name: string, config: ToolConfig<I, O>, body: (input: ShapeOutput<I>) => Promise<CallToolResult>): void => {
    names.push(name);
    // The SDK's callback type is conditional on the shape, which TypeScript leaves unresolved for a generic I: it is this one.
    const callback = ((input: ShapeOutput<I>) => guarded(() => body(input))) as unknown as ToolCallback<I>;
    server.registerTool(name, config, callback);
  };
  const scope = client.org === undefined ? "" : ` of the organization ${client.org}`;
  // The private keys of request_secret's requests, for run_command's `request:<id>`: in memory only.
  const keyring = new RequestKeyring();
  if (caps.list) {
    offer(
      "list_secrets",
      {
        title: "List secrets",
        description: `List the secrets${scope} the token can see, as metadata (key, read_count, max_reads, created_at, expires_at in Unix seconds). Never returns values and does not count as a read. Use prefix to narrow, e.g. "prod/".`,
        inputSchema: { prefix: z.string().optional().describe("Only keys starting with this prefix.") },
        outputSchema: { secrets: z.array(secretMeta) },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async (input) => {
        const entries: z.infer<typeof secretMeta>[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.list({ ...(input.prefix === undefined ? {} : { prefix: input.prefix }), ...(cursor === undefined ? {} : { cursor }) });
          entries.push(...page.secrets);
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
        return result({ secrets: entries });
      },
    );
  }
  if (caps.read) {
    offer(
      "secret_info",
      {
        title: "Check a secret (no read counted)",
        description: `Whether a secret${scope} exists, without reading it: no read is counted, nothing is burned, the value is never returned.${caps.list ? " When it exists, also its metadata (read_count, max_reads, created_at, expires_at in Unix seconds)." : ""} Errors: 410 when sealed; 403 outside the token's prefix.`,
        inputSchema: { key },
        outputSchema: {
          key: z.string(),
          exists: z.boolean(),
          read_count: z.number().optional(),
          max_reads: z.number().nullable().optional(),
          created_at: z.number().optional(),
          expires_at: z.number().nullable().optional(),
        },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async (input) => {
        const exists = await client.exists(input.key);
        if (!exists || !caps.list) return result({ key: input.key, exists });
        const meta = await findMeta(client, input.key);
        const pick = meta === undefined ? {} : { read_count: meta.read_count, max_reads: meta.max_reads, created_at: meta.created_at, expires_at: meta.expires_at };
        return result({ key: input.key, exists, ...pick });
      },
    );
  }
  if (caps.read && options.reveal !== undefined) registerGetSecret(server, client, options.reveal.prefix, scope, names);
  if (caps.create) {
    offer(
      "put_secret",
      {
        title: "Store a secret",
        description: `Store a secret value${scope} under a new key, optionally expiring after ttl_seconds and/or burned after max_reads reads. Write-only: returns a confirmation, never the value. Errors: 409 when a live secret already has that key (it is not replaced: delete it first); 402 at the free-tier limit; 403 outside the token's prefix or permissions.`,
        inputSchema: { key, value: z.string().describe("The secret value, stored exactly as given."), ttl_seconds: ttlSeconds, max_reads: maxReads },
        outputSchema: { key: z.string(), stored: z.literal(true) },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async (input) => {
        await client.put(input.key, input.value, limits(input));
        return result({ key: input.key, stored: true });
      },
    );
  }
  if (caps.share) {
    offer(
      "share_secret",
      {
        title: "Share a one-time secret link",
        description:
          "Make a public dead drop for a value, encrypted end to end: no key, readable by anyone who has the returned url, burned after max_reads reads (default 1). Returns {url, id, receipt}; give the url to the recipient and do not open it yourself (opening it counts as the read). The receipt (vrc_...) cannot read the value: call again with receipt (no value) to learn whether the link was opened (state waiting, opened, burned, expired or deleted; read_count, last_read_at).",
        inputSchema: {
          value: z.string().optional().describe("The value to share. Makes a new link."),
          ttl_seconds: ttlSeconds,
          max_reads: maxReads.describe("Number of reads before the link stops working (default 1)."),
          receipt: z
            .string()
            .regex(/^vrc_[A-Za-z0-9_-]{43,128}$/)
            .optional()
            .describe("The receipt of a link this tool made: returns whether it was opened, instead of making a new one."),
        },
        outputSchema: {
          url: z.string().optional(),
          id: z.string().optional(),
          receipt: z.string().describe("The sender's receipt: tells whether the link was opened; never reads the value."),
          state: z.enum(["waiting", "opened", "burned", "expired", "deleted"]).optional(),
          read_count: z.number().optional(),
          max_reads: z.number().nullable().optional(),
          last_read_at: z.number().nullable().optional().describe("Unix seconds."),
          expires_at: z.number().nullable().optional().describe("Unix seconds."),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      },
      async (input) => {
        if (input.receipt !== undefined) {
          if (input.value !== undefined) return failure("give either value (a new link) or receipt (the status of one), not both");
          // docs/share.md, "Receipts": the receipt's status, never the value.
          const r = await options.globalClient.receipt(input.receipt);
          return result({ receipt: input.receipt, state: r.state, read_count: r.readCount, max_reads: r.maxReads, last_read_at: r.lastReadAt, expires_at: r.expiresAt });
        }
        if (input.value === undefined) return failure("give value: what to share (or receipt for the status of a link)");
        const shared = await options.globalClient.share(input.value, { maxReads: 1, ...limits(input) });
        return result({ url: shared.url, id: shared.id, receipt: shared.receipt });
      },
    );
  }
  if (caps.request) {
    offer(
      "request_secret",
      {
        title: "Ask a person for a secret",
        description: `Ask a person for a secret${scope} without it passing through you: give description (what you ask for) and get {request_id, url}; send the url to the person who has the secret, who answers in their browser (encrypted there to a key this server holds; you never see the answer). Call again with request_id (no description) to learn whether it was answered (state "answered"); then run_command with env {"NAME": "request:<request_id>"} gives the answer to a command, masked in its output. The answer is read once (default 1 read), then burned. Errors: 404 when the request expired or was deleted.`,
        inputSchema: requestInput,
        outputSchema: requestOutput,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      (input) => requestSecret(client, keyring, input),
    );
  }
  if (caps.delete) {
    offer(
      "delete_secret",
      {
        title: "Delete a secret",
        description: `Delete a secret${scope} by its key, at once and for good. Errors: 404 when it does not exist; 403 outside the token's prefix or permissions.`,
        inputSchema: { key },
        outputSchema: { key: z.string(), deleted: z.literal(true) },
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      },
      async (input) => {
        await client.delete(input.key);
        return result({ key: input.key, deleted: true });
      },
    );
  }
  if (caps.patch) {
    offer(
      "patch_secret",
      {
        title: "Change a secret's expiry or read limit",
        description: `Set a new TTL (ttl_seconds from now) and/or a new read limit (max_reads; the read count starts again at 0) for an existing secret${scope}. Give at least one of them. Errors: 404 when it does not exist; 400 for bad values.`,
        inputSchema: { key, ttl_seconds: ttlSeconds, max_reads: maxReads },
        outputSchema: { key: z.string(), updated: z.literal(true) },
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      async (input) => {
        if (input.ttl_seconds === undefined && input.max_reads === undefined) return failure("give ttl_seconds or max_reads");
        await client.patch(input.key, limits(input));
        return result({ key: input.key, updated: true });
      },
    );
  }
  if (caps.read && options.commands.length > 0) {
    registerRunCommand(server, options, caps.list, keyring);
    names.push("run_command");
  }
  if (caps.read && options.http !== undefined && options.http.hosts.length > 0) {
    registerHttpRequest(server, options, options.http);
    names.push("http_request");
  }
  return names;
}

/** get_secret: offered only with `--allow-reveal` (docs/mcp.md); with a PREFIX, only keys under PREFIX/ (whole path segments). */
function registerGetSecret(server: McpServer, client: VaultClient, prefix: string | undefined, scope: string, names: string[]): void {
  const path = prefix === undefined ? undefined : prefixPath(prefix);
  names.push("get_secret");
  server.registerTool(
    "get_secret",
    {
      title: "Reveal a secret's value",
      description: `Read the value of a secret${scope} by its key${path === undefined ? "" : ` (only keys under ${path})`}. The value enters your context and the conversation: prefer run_command, which gives a command the value without showing it to you. Every call counts as a read: a secret with a read limit is burned (deleted) when the limit is reached, so read it once. Errors: 404 when the key does not exist, expired or was burned; 410 when sealed; 403 outside the token's prefix.`,
      inputSchema: { key },
      outputSchema: { key: z.string(), value: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (input) =>
      guarded(async () => {
        if (path !== undefined && !input.key.startsWith(path)) return failure(`get_secret may reveal only keys under ${path} (--allow-reveal)`);
        return result({ key: input.key, value: (await client.get(input.key)).value });
      }),
  );
}

/** The list entry of `wanted`, paging through the list (no read counted). */
async function findMeta(client: VaultClient, wanted: string): Promise<z.infer<typeof secretMeta> | undefined> {
  let cursor: string | undefined;
  do {
    const page = await client.list({ prefix: wanted, ...(cursor === undefined ? {} : { cursor }) });
    const found = page.secrets.find((s) => s.key === wanted);
    if (found !== undefined) return found;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return undefined;
}

import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { RoutePermission } from "./routes/declare.js";

/** A JSON Schema (2020-12) object. */
export type JsonSchema = Record<string, unknown>;

/** One route's description, derived from its declaration (routes/declare.ts routeDocs()). */
export interface RouteDoc {
  method: "get" | "post" | "put" | "patch" | "delete" | "head";
  /** OpenAPI path, `{param}` style. */
  path: string;
  summary: string;
  /** Who may call it (routes/declare.ts RoutePermission); the operation's `x-permission`. */
  permission: RoutePermission;
  /** The valibot schema the handler validates the body with. */
  body?: v.GenericSchema;
  /** Query parameters and their description. */
  query?: Record<string, string>;
  /** Path parameters' descriptions. */
  params?: Record<string, string>;
  /** Status -> description, or description and body schema. */
  responses: Record<number, string | { description: string; schema?: JsonSchema; contentType?: string }>;
}

const errorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" }, message: { type: "string" } },
};

/**
 * Builds the OpenAPI 3.1 document served at GET /openapi.json from the
 * descriptions of the mounted routes' declarations; request bodies are the
 * routes' own valibot schemas converted to JSON Schema, so the document
 * follows the validation.
 */
export function buildOpenApi(version: string, docs: RouteDoc[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of docs) {
    const params = [...doc.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      ...(m[1] !== undefined && doc.params?.[m[1]] !== undefined ? { description: doc.params[m[1]] } : {}),
      schema: { type: "string" },
    }));
    const query = Object.entries(doc.query ?? {}).map(([name, description]) => ({
      name,
      in: "query",
      required: false,
      description,
      schema: { type: "string" },
    }));
    const responses: Record<string, unknown> = {};
    const all: Record<number, string | { description: string; schema?: JsonSchema; contentType?: string }> = { ...doc.responses };
    if (doc.permission !== "none") {
      all[401] ??= "missing, invalid, expired or revoked token";
      all[403] ??= "the token may not do this";
      all[429] ??= "too many failed authentications from this ip (VAULT_AUTH_FAIL_LIMIT); see Retry-After";
    }
    for (const [status, r] of Object.entries(all)) {
      const { description, schema, contentType } = typeof r === "string" ? { description: r, schema: undefined, contentType: undefined } : r;
      const isError = Number(status) >= 400;
      responses[status] = {
        description,
        content: { [contentType ?? "application/json"]: { schema: schema ?? (isError ? errorSchema : { type: "object" }) } },
      };
    }
    const operation: Record<string, unknown> = {
      summary: doc.summary,
      parameters: [...params, ...query],
      responses,
      security: doc.permission === "none" ? [] : [{ bearer: [] }],
    };
    if (doc.permission !== "none") operation["x-permission"] = doc.permission;
    if (doc.body) {
      operation.requestBody = {
        required: true,
        content: { "application/json": { schema: toJsonSchema(doc.body, { errorMode: "ignore" }) } },
      };
    }
    (paths[doc.path] ??= {})[doc.method] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "ephemeral-vault",
      version,
      description:
        "A secrets vault: values encrypted at rest, TTLs, read limits that burn, scoped keys, organizations, audit and signed webhooks. Times are Unix seconds. Every error is {error, message?}.",
      license: { name: "MIT", identifier: "MIT" },
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}

import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { ParamsSchema, Route } from "./routes/declare.js";

/** A JSON Schema (2020-12) object. */
export type JsonSchema = Record<string, unknown>;

const errorSchema: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string" }, message: { type: "string" } },
};

/** `/orgs/:org_id/secrets/:key{.+}` -> `/orgs/{org_id}/secrets/{key}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)(\{[^}]*\})?/g, "{$1}");
}

/**
 * A valibot schema as JSON Schema, without the draft-07 `$schema` tag
 * (OpenAPI 3.1 is 2020-12); checks and transforms have no JSON Schema form
 * and are left out (the schema's messages state them).
 */
export function jsonSchemaOf(schema: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, ...rest } = toJsonSchema(schema, { errorMode: "ignore" }) as JsonSchema;
  return rest;
}

/**
 * A request body's schema whose optional properties also take `null`
 * (docs/contract.md §14: `null` in an optional field means it is omitted);
 * each such property becomes `anyOf: [its schema, {type: "null"}]`.
 * @param schema the body's JSON Schema (an object schema; others pass unchanged).
 */
export function nullableOptionals(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties === undefined) return schema;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries(properties)) {
    out[name] = required.has(name) ? property : { anyOf: [property, { type: "null" }], description: "null: the same as leaving the field out" };
  }
  return Object.assign({}, schema, { properties: out });
}

/** One OpenAPI parameter object. */
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

/** The Idempotency-Key header of a retry-safe operation (docs/api.md, "Retries"). */
const IDEMPOTENCY_PARAMETER: Parameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "1 to 255 printable ASCII characters. The first answer is kept with the change for VAULT_IDEMPOTENCY_WINDOW seconds (default 600); a retry with the same key, token and request gets it again, with Idempotent-Replayed: true, and changes nothing.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
};

/** The answers the Idempotency-Key adds. */
const IDEMPOTENCY_RESPONSES = {
  "422": {
    description: "this Idempotency-Key was used with another request (method, path or body) within the window",
    content: { "application/json": { schema: { type: "object", properties: { error: { type: "string" }, message: { type: "string" } }, required: ["error"] } } },
  },
};

/**
 * The OpenAPI parameters of a route's path (in the order of the path, every
 * one required) or query (in the order of its schema): each from its entry
 * of the route's valibot object, its description lifted onto the parameter.
 * An undeclared path parameter is a plain string.
 */
function parametersOf(where: "path" | "query", schema: ParamsSchema | undefined, pathNames: string[]): Parameter[] {
  const json = schema === undefined ? {} : jsonSchemaOf(schema);
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = (json.required ?? []) as string[];
  const names = where === "path" ? pathNames : Object.keys(properties);
  return names.map((name) => {
    const { description, ...schema } = properties[name] ?? { type: "string" };
    const isRequired = where === "path" || required.includes(name);
    return typeof description === "string"
      ? { name, in: where, required: isRequired, description, schema }
      : { name, in: where, required: isRequired, schema };
  });
}

/** The responses of an operation; 401, 403 and 429 added for routes that need a token. */
function responsesOf(route: Route): Record<string, unknown> {
  const all = { ...route.responses };
  if (route.permission !== "none") {
    all[401] ??= { description: "missing, invalid, expired or revoked token" };
    all[403] ??= { description: "the token may not do this" };
    all[429] ??= { description: "too many failed authentications from this ip (VAULT_AUTH_FAIL_LIMIT); see Retry-After" };
  }
  const responses: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(all)) {
    const isError = Number(status) >= 400;
    const schema = r.schema === undefined ? (isError ? errorSchema : { type: "object" }) : jsonSchemaOf(r.schema);
    responses[status] = { description: r.description, content: { [r.contentType ?? "application/json"]: { schema } } };
  }
  return responses;
}

/**
 * Builds the OpenAPI 3.1 document served at GET /openapi.json from the
 * mounted routes' declarations (routes/declare.ts): parameters, request
 * bodies and responses are the routes' own valibot schemas converted to JSON
 * Schema, so the document follows the validation.
 */
export function buildOpenApi(version: string, routes: readonly Route[]): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const pathNames = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? "");
    const operation: Record<string, unknown> = {
      summary: route.summary,
      parameters: [...parametersOf("path", route.params, pathNames), ...parametersOf("query", route.query, []), ...(route.idempotent === true ? [IDEMPOTENCY_PARAMETER] : [])],
      responses: route.idempotent === true ? Object.assign(responsesOf(route), IDEMPOTENCY_RESPONSES) : responsesOf(route),
      security: route.permission === "none" ? [] : [{ bearer: [] }],
    };
    if (route.permission !== "none") operation["x-permission"] = route.permission;
    if (route.body !== undefined) {
      operation.requestBody = { required: true, content: { "application/json": { schema: nullableOptionals(jsonSchemaOf(route.body)) } } };
    }
    (paths[path] ??= {})[route.method] = operation;
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

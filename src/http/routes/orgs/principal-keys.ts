import * as v from "valibot";
import type { PrincipalKey } from "../../../domain/orgs/principal-keys.js";
import { int, nullableInt, seconds } from "../answers.js";
import { intRange, MAX_UNIX_SECONDS, nameField } from "../input.js";

/**
 * Principal keys at the edge, shared by the master key's routes
 * (/orgs/:org_id/principals/:id/keys, orgs/principals.ts) and the
 * principal's own (/me/keys, orgs/me.ts): the create body, the JSON of a
 * key, and their OpenAPI schemas. Never a token except
 * in the create response.
 */

/**
 * POST /orgs/:org_id/principals/:id/keys and POST /me/keys (docs/contract.md
 * §9): `name`, and optional `valid_after` / `valid_before` in Unix seconds.
 */
export const newKeyBody = v.object({
  name: nameField(),
  valid_after: v.optional(intRange("valid_after", 0, MAX_UNIX_SECONDS)),
  valid_before: v.optional(intRange("valid_before", 0, MAX_UNIX_SECONDS)),
});

/** The domain input of newKeyBody: seconds become milliseconds. */
export function newKeyInput(body: v.InferOutput<typeof newKeyBody>): {
  name: string;
  validAfter: number | undefined;
  validBefore: number | undefined;
} {
  return {
    name: body.name,
    validAfter: body.valid_after === undefined ? undefined : body.valid_after * 1000,
    validBefore: body.valid_before === undefined ? undefined : body.valid_before * 1000,
  };
}

/** A principal key summary: `{id, name, valid_after, valid_before, created_at}`; never the token. */
export function keySummaryJson(k: PrincipalKey) {
  return {
    id: k.id,
    name: k.name,
    valid_after: seconds(k.validAfter),
    valid_before: seconds(k.validBefore),
    created_at: seconds(k.createdAt),
  };
}

/** The create response of a principal key: the summary plus `key`, the token, shown this once. */
export function createdKeyJson(k: PrincipalKey, token: string) {
  const summary = keySummaryJson(k);
  return { id: summary.id, name: summary.name, key: token, valid_after: summary.valid_after, valid_before: summary.valid_before, created_at: summary.created_at };
}

const keySummaryFields = {
  id: v.string(),
  name: v.string(),
  valid_after: nullableInt,
  valid_before: nullableInt,
  created_at: int,
};

/** A principal key summary. */
export const keySummarySchema = v.object(keySummaryFields);

/** A created principal key (its token shown once). */
export const createdKeySchema = v.object({
  ...keySummaryFields,
  key: v.pipe(v.string(), v.description("vpk_ token, shown only here")),
});

/** The 201's description of a created principal key. */
export const CREATED_KEY = "{id, name, key, valid_after, valid_before, created_at}";

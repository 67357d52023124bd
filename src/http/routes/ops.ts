import type * as v from "valibot";
import { originOf } from "../context.js";
import type { AppContext } from "../context.js";
import type { Origin } from "../../domain/events.js";
import type { Page } from "../../domain/paging.js";
import { deletedSchema } from "./answers.js";
import { route } from "./declare.js";
import type { ParamsSchema, ResponseDecl, Route, RouteDecl, RouteInput, RoutePermission } from "./declare.js";
import { pageQuery } from "./input.js";
import { listSchema, pageBody } from "./lists.js";
import { pageOf } from "./org-scope.js";
import type { PageArgs } from "./org-scope.js";

/**
 * The kinds of resource routes (docs/architecture.md "Where each rule lives"): the org
 * resources (organizations, roles, principals, their keys), /me, scoped keys
 * and webhooks are each a few operations of one shape: a JSON answer of what
 * the domain did (`op`), or a page of a list (`listOp`). Both build a typed
 * route() declaration: mount() still checks the permission, then the params,
 * query and body, before `run` / `page` sees the validated input.
 */

/** Error responses by status: a description (the error shape) or a whole ResponseDecl. */
export type Errors = Readonly<Record<number, string | ResponseDecl>>;

/** The shared part of an operation's declaration. */
interface OpHead<P extends ParamsSchema | undefined> {
  summary: string;
  /** Default `request` (RouteDecl.auditAction). */
  auditAction?: string;
  params?: P;
  /** The error answers the route documents besides 401/403/429 (openapi.ts adds those). */
  errors?: Errors;
}

/** One operation answering JSON: `ok` is its status, description and schema. */
export interface OpDecl<P extends ParamsSchema | undefined, Q extends ParamsSchema | undefined, B extends v.GenericSchema | undefined> extends OpHead<P> {
  query?: Q;
  body?: B;
  ok: readonly [status: 200 | 201 | 202, description: string, schema: v.GenericSchema];
  /**
   * What the operation answers, given the validated input and the request's
   * audit origin (taken before `run`, so the same for every row it writes).
   */
  run: (c: AppContext, input: RouteInput<P, Q, B>, origin: Origin) => Promise<unknown>;
}

/** The `{deleted: true}` answer of a DELETE (answers.ts deletedSchema). */
export const DELETED = [200, "{deleted: true}", deletedSchema] as const;

/** The 400 of a paged list (input.ts pageQuery, decodeCursor). */
const BAD_PAGE = "invalid limit or cursor";

/** The responses route() declares: the success `ok`, and the errors (a bare description becomes `{description}`). */
function responsesOf(errors: Errors | undefined, status: number, ok: ResponseDecl): Record<number, ResponseDecl> {
  const out: Record<number, ResponseDecl> = { [status]: ok };
  for (const [code, e] of Object.entries(errors ?? {})) out[Number(code)] = typeof e === "string" ? { description: e } : e;
  return out;
}

/**
 * A route answering `run`'s result as JSON with `ok`'s status; a DELETE
 * answers `{deleted: true}` (DELETED) whatever `run` gives.
 * @throws whatever `run` throws (ApiError, VaultError), answered by the app's error handler.
 */
export function op<P extends ParamsSchema | undefined = undefined, Q extends ParamsSchema | undefined = undefined, B extends v.GenericSchema | undefined = undefined>(
  method: RouteDecl["method"],
  path: string,
  permission: RoutePermission,
  decl: OpDecl<P, Q, B>,
): Route {
  const { run, ok } = decl;
  const [status, description, schema] = ok;
  return route<P, Q, B>({
    method,
    path,
    summary: decl.summary,
    permission,
    auditAction: decl.auditAction,
    params: decl.params,
    query: decl.query,
    body: decl.body,
    responses: responsesOf(decl.errors, status, { description, schema }),
    handler: async (c, input) => {
      const answer = await run(c, input, originOf(c));
      return c.json(method === "delete" ? { deleted: true as const } : answer, status);
    },
  });
}

/** A paged list (GET with `limit` and `cursor`): `{<field>: items, next_cursor?}`. */
export interface ListDecl<P extends ParamsSchema | undefined, T> extends OpHead<P> {
  field: string;
  /** The schema of one item as `json` makes it. */
  item: v.GenericSchema;
  /** The 200's description; default `{<field>, next_cursor?}`. */
  description?: string;
  /** One page; `args` is read before (a bad cursor is 400 before any unit of work). */
  page: (c: AppContext, params: RouteInput<P, undefined, undefined>["params"], args: PageArgs) => Promise<Page<T>>;
  /** An item as the answer shows it. */
  json: (item: T) => unknown;
}

/**
 * A GET route answering one page of a list (docs/api.md, its conventions:
 * `limit` 1-1000, default 1000; `next_cursor` while more remain).
 * @throws ApiError 400 "cursor is not valid" (pageOf); whatever `page` throws.
 */
export function listOp<P extends ParamsSchema | undefined = undefined, T = unknown>(path: string, permission: RoutePermission, decl: ListDecl<P, T>): Route {
  const { field, page, json } = decl;
  const description = decl.description ?? `{${field}, next_cursor?}`;
  return route<P, typeof pageQuery>({
    method: "get",
    path,
    summary: decl.summary,
    permission,
    auditAction: decl.auditAction,
    params: decl.params,
    query: pageQuery,
    // Every list refuses a bad limit or cursor (pageOf), whatever else its route refuses.
    responses: responsesOf({ 400: BAD_PAGE, ...decl.errors }, 200, { description, schema: listSchema(field, decl.item) }),
    handler: async (c, { params, query }) => {
      const args = pageOf(query);
      const got = await page(c, params, args);
      return c.json(pageBody(field, got.items.map(json), got.nextAfterId));
    },
  });
}

/** The 404 of a route under `/orgs/:org_id` (org-auth.ts orgIdOf). */
export const NO_ORG = "no such organization";

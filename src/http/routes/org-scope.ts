import type { AppContext } from "../context.js";
import { orgIdOf } from "../org-auth.js";
import type { Awaitable } from "../../model/awaitable.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { decodeCursor } from "./lists.js";

/**
 * Helpers the org and key routes share (docs/api.md, its conventions;
 * docs/orgs.md): the work of a request on one org's resources, and the
 * arguments of one page of a paged list.
 */

/**
 * Runs `fn` in one unit of work on the org of the path's `:org_id`.
 * @returns what `fn` returns.
 * @throws ApiError 404 "organization not found" (org-auth.ts orgIdOf) before `fn` runs; whatever `fn` throws.
 */
export function inOrg<T>(tx: UnitOfWork<Work>, c: AppContext, fn: (w: Work, orgId: string) => Awaitable<T>): Promise<T> {
  return tx.run(async (w) => fn(w, await orgIdOf(w, c)));
}

/** The page a list query asks for: `limit` rows at most (default 1000) after the row id `afterId` (none: from the first). */
export interface PageArgs {
  limit: number;
  afterId: number | undefined;
}

/**
 * The arguments of one page of a list from its validated query
 * (input.ts pageQuery; its cursor: lists.ts decodeCursor). Call it before
 * the unit of work: a bad cursor is a 400 that touches nothing.
 * @throws ApiError 400 "cursor is not valid".
 */
export function pageOf(query: { limit?: number | undefined; cursor?: string | undefined }): PageArgs {
  return { afterId: decodeCursor(query.cursor), limit: query.limit ?? 1000 };
}

import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.js";

/**
 * The last handler of a path: a method not handled before it gets 405
 * with `Allow` (docs/contract.md §14).
 * @throws ApiError 405.
 */
export function methodNotAllowed(allowed: string[]): MiddlewareHandler {
  const allow = allowed.join(", ");
  return () => {
    throw new ApiError(405, "method not allowed", { headers: { Allow: allow } });
  };
}

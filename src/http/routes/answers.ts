import * as v from "valibot";

/**
 * The fields of answers several route files share (docs/api.md, its
 * conventions): times and counts are integers, Unix seconds for times
 * (seconds() converts the domain's milliseconds), and their schemas.
 */

/** An integer (a count, or Unix seconds). */
export const int = v.pipe(v.number(), v.integer());

/** An integer or null (an optional time or limit). */
export const nullableInt = v.nullable(int);

/** `{deleted: true}`, the answer of every DELETE. */
export const deletedSchema = v.object({ deleted: v.literal(true) });

/** Seconds from milliseconds, for the API (docs/contract.md §5). */
export function seconds(ms: number): number;
export function seconds(ms: number | null): number | null;
export function seconds(ms: number | null): number | null {
  return ms === null ? null : Math.floor(ms / 1000);
}

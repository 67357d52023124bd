import * as v from "valibot";

/**
 * Schemas of answers several route files share (docs/api.md, its
 * conventions): times and counts are integers, Unix seconds for times.
 */

/** An integer (a count, or Unix seconds). */
export const int = v.pipe(v.number(), v.integer());

/** An integer or null (an optional time or limit). */
export const nullableInt = v.nullable(int);

/** `{deleted: true}`, the answer of every DELETE. */
export const deletedSchema = v.object({ deleted: v.literal(true) });

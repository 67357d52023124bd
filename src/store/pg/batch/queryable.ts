import type pg from "pg";

/** What a PostgreSQL store runs its statements on: the unit of work's connection (a pooled client's, cork.ts). */
export type Queryable = Pick<pg.PoolClient, "query">;

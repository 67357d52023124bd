import type { PrincipalKeys } from "../../domain/principal-keys.js";
import type { SecretLifecycle } from "../../domain/secrets.js";
import type { UnitOfWork, Work } from "../../store/work.js";

/** What the secret routes (secrets.ts, and the PUT of secret-replace.ts) are built over. */
export interface SecretRouteDeps {
  secrets: SecretLifecycle;
  /** Principal keys, to check an org secret's `allowed_keys` at creation. */
  keys: PrincipalKeys;
  tx: UnitOfWork<Work>;
  /** Base of public secrets' `url`, without a trailing slash; a function when known only once listening. */
  publicUrl: string | (() => string);
  /** The path under it that names a public secret: `/s/` (the recipient page) or `/secrets/` (the API, without the pages). */
  publicPath: string;
  maxValueBytes: number;
}

/** Where a set of secret routes lives: the global key space or an org's. */
export type SecretScope = "global" | "org";

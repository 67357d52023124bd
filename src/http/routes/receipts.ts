import * as v from "valibot";
import type { Origin } from "../../domain/events.js";
import type { Receipts, ReceiptView } from "../../domain/receipts/receipts.js";
import type { SecretLifecycle } from "../../domain/secrets/lifecycle.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { ApiError } from "../errors.js";
import type { ShareMissGuard } from "../pages/share-guard.js";
import { refuseBlocked } from "../pages/routes.js";
import { int, nullableInt, seconds } from "./answers.js";
import { route } from "./declare.js";
import type { Route } from "./declare.js";

/** True for the token-less paths of receipts, `/receipts/<token>...`. */
export function isReceiptPath(path: string): boolean {
  return path.startsWith("/receipts/");
}

export interface ReceiptRouteDeps {
  tx: UnitOfWork<Work>;
  receipts: Receipts;
  secrets: SecretLifecycle;
  /** The share pages' limiter of misses: a receipt that is not there counts as a miss under /s/. */
  shareGuard: ShareMissGuard;
  trustProxy: boolean;
}

/** A receipt as the API answers it (docs/share.md, "Receipts"). */
const receiptSchema = v.object({
  state: v.picklist(["waiting", "opened", "burned", "expired", "deleted"]),
  created_at: int,
  expires_at: nullableInt,
  max_reads: nullableInt,
  read_count: int,
  last_read_at: v.pipe(nullableInt, v.description("the last read's time; null before the first")),
});

function receiptJson(r: ReceiptView) {
  return {
    state: r.state,
    created_at: seconds(r.createdAt) as number,
    expires_at: seconds(r.expiresAt),
    max_reads: r.maxReads,
    read_count: r.readCount,
    last_read_at: seconds(r.lastReadAt),
  };
}

const tokenParams = v.object({ token: v.pipe(v.string(), v.description("the receipt: vrc_ + 54 base64url characters")) });

/** The audit origin of a destroy by receipt: actor `receipt`, the client's address. */
function receiptOrigin(ip: string | null): Origin {
  return { actor: "receipt", principalId: null, ip, recorded: false };
}

/**
 * Receipts (docs/share.md, "Receipts"), without a token (the receipt is the
 * capability): `GET /receipts/<token>` says whether the secret was opened
 * and how it ended, never its value; `POST /receipts/<token>/destroy`
 * deletes it now (audit and event `secret.deleted`, actor `receipt`). An
 * unknown receipt is 404 and counts against the share pages' limiter of
 * misses (429 with Retry-After past it).
 */
export function receiptRoutes(deps: ReceiptRouteDeps): Route[] {
  const missing = (client: ReturnType<typeof refuseBlocked>): never => {
    deps.shareGuard.countRefusal(client);
    throw new ApiError(404, "receipt not found");
  };
  return [
    route({
      method: "get",
      path: "/receipts/:token",
      summary: "What a public secret's receipt says: waiting, opened (reads, the last one's time), burned, expired or deleted. Never the value. No token: the receipt is the capability.",
      permission: "none",
      params: tokenParams,
      responses: {
        200: { description: "{state, created_at, expires_at, max_reads, read_count, last_read_at}", schema: receiptSchema },
        404: { description: "no such receipt (or kept past its time)" },
        429: { description: "too many misses from this address; Retry-After" },
      },
      handler: async (c, { params }) => {
        const client = refuseBlocked(c, deps);
        const view = await deps.tx.run((w) => deps.receipts.view(w, params.token));
        if (view === undefined) return missing(client);
        return c.json(receiptJson(view), 200);
      },
    }),
    route({
      method: "post",
      path: "/receipts/:token/destroy",
      summary: "Destroy the receipt's secret now (audit and event secret.deleted). No token: the receipt is the capability.",
      permission: "none",
      params: tokenParams,
      responses: {
        200: { description: "the receipt after: state deleted", schema: receiptSchema },
        404: { description: "no such receipt" },
        409: { description: "the secret has ended already (burned, expired or deleted)" },
        429: { description: "too many misses from this address; Retry-After" },
      },
      handler: async (c, { params }) => {
        const client = refuseBlocked(c, deps);
        const view = await deps.tx.run((w) => deps.receipts.destroy(w, deps.secrets, params.token, receiptOrigin(client.ip)));
        if (view === undefined) return missing(client);
        return c.json(receiptJson(view), 200);
      },
    }),
  ];
}

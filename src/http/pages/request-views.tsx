import type { Context, Hono } from "hono";
import type { AppEnv } from "../context.js";
import { PUBLIC_ID_PATTERN } from "../../domain/secrets/model.js";
import { MessagePage } from "./layout.js";
import { AnswerPage, OpenPage } from "./request-page.js";
import type { RequestPageDeps } from "./request-routes.js";
import { clientOf } from "./routes.js";
import type { ShareClient } from "./share-guard.js";
import { newNonce, setPageHeaders } from "./security.js";
import { stringsFor } from "./strings.js";

/**
 * What the request pages need, from createApp: the share pages' deps with
 * the requests' domain (peekOpen), the share pages' miss limiter and
 * VAULT_MAX_VALUE_BYTES (the answer page refuses a longer answer before sending it).
 */
export type RequestViewDeps = Pick<RequestPageDeps, "tx" | "requests" | "settings" | "trustProxy" | "shareGuard" | "maxValueBytes">;

/** From a page's path back to the vault's root: `../` for `/r/<id>`, `../../` for `/r/<id>/open`. */
function rootOf(path: string): string {
  return "../".repeat(Math.max(0, path.split("/").length - 2));
}

/**
 * Mounts the request pages' GET routes (docs/requests.md, "The answer page
 * and the private link"), with the share pages' headers and rules
 * (docs/share.md, "What a page holds to"):
 *
 * - `GET /r/<id>`: the answer page of an open request (who asked, what for,
 *   until when; a text area and Send). Loading it reads and changes nothing.
 * - `GET /r/<id>/open`: the private link's page; it looks nothing up (its
 *   script reads the private key from the fragment and reveals on a click).
 * - any other GET under `/r/`, and an unknown, expired or answered request:
 *   the one "This request is not available" page, 404, counted against the
 *   share pages' miss limiter (429 with Retry-After once over it), as under /s/.
 *
 * The token-less POSTs (`/r/<id>/answer`, `/r/<id>/reveal`) are the request
 * routes' own (request-routes.ts); this mounts GETs only. Off with
 * VAULT_SHARE_PAGE=false.
 */
export function mountRequestPages(app: Hono<AppEnv>, deps: RequestViewDeps): void {
  if (!deps.settings.page) return;
  const html = (c: Context<AppEnv>, status: 200 | 404 | 429, nonce: string | undefined, page: ReturnType<typeof MessagePage>) => {
    setPageHeaders(c, nonce);
    return c.html(page, status);
  };
  const notAvailable = (c: Context<AppEnv>, client: ShareClient) => {
    deps.shareGuard.countRefusal(client);
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 404, undefined, <MessagePage s={s} root={rootOf(c.req.path)} title={s.requestNotAvailableTitle} lead={s.requestNotAvailableLead} />);
  };
  /** The 429 page for an address over the share pages' limiter; undefined when it is not refused. */
  const blocked = (c: Context<AppEnv>, client: ShareClient) => {
    const waitMs = deps.shareGuard.retryAfterMs(client);
    if (waitMs <= 0) return undefined;
    c.header("Retry-After", String(Math.ceil(waitMs / 1000)));
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 429, undefined, <MessagePage s={s} root={rootOf(c.req.path)} title={s.tooManyTitle} lead={s.tooManyLead} />);
  };

  app.get("/r/:id", async (c) => {
    const client = clientOf(c, deps.trustProxy);
    const refused = blocked(c, client);
    if (refused !== undefined) return refused;
    const id = c.req.param("id");
    if (!PUBLIC_ID_PATTERN.test(id)) return notAvailable(c, client);
    const open = await deps.tx.run((w) => deps.requests.peekOpen(w, id));
    if (open === undefined) return notAvailable(c, client);
    const nonce = newNonce();
    const s = stringsFor(c.req.header("accept-language"));
    const facts = { description: open.description, asker: open.asker, publicKey: open.publicKey, expiresAt: Math.floor(open.expiresAt / 1000) };
    return html(c, 200, nonce, <AnswerPage s={s} root={rootOf(c.req.path)} nonce={nonce} facts={facts} maxValueBytes={deps.maxValueBytes} />);
  });

  app.get("/r/:id/open", (c) => {
    const client = clientOf(c, deps.trustProxy);
    const refused = blocked(c, client);
    if (refused !== undefined) return refused;
    // Nothing is looked up: only the id's shape is checked (the fragment, the key, never reaches the server).
    if (!PUBLIC_ID_PATTERN.test(c.req.param("id"))) return notAvailable(c, client);
    const nonce = newNonce();
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 200, nonce, <OpenPage s={s} root={rootOf(c.req.path)} nonce={nonce} />);
  });

  app.get("/r", (c) => notAvailable(c, clientOf(c, deps.trustProxy)));
  app.get("/r/*", (c) => notAvailable(c, clientOf(c, deps.trustProxy)));
}

import type { Context, Hono } from "hono";
import { forwardedIp, socketIp } from "../auth.js";
import type { AppEnv } from "../context.js";
import type { ChangeAudit, Origin } from "../../domain/events.js";
import { destroyPublic, publicFileMeta, revealNeedsProof, revealPublic } from "../../domain/secrets/reveal.js";
import type { RevealOutcome } from "../../domain/secrets/reveal.js";
import { VaultError } from "../../model/errors.js";
import { GLOBAL_SCOPE, PUBLIC_ID_PATTERN } from "../../domain/secrets/model.js";
import type { SecretLifecycle } from "../../domain/secrets/lifecycle.js";
import type { Receipts } from "../../domain/receipts/receipts.js";
import type { IdempotencyKeys } from "../../domain/idempotency/keys.js";
import { answerOnce, IDEMPOTENCY_HEADER } from "../routes/idempotent.js";
import type { Answer } from "../routes/idempotent.js";
import { ApiError } from "../errors.js";
import { MAX_BODY_BYTES, readJsonObject, withoutNulls } from "../routes/declare.js";
import { afterRefusal, readJson } from "../routes/secrets/secret-route.js";
import type { UnitOfWork, Work } from "../../store/work.js";
import { anonymousCreate, GlobalRate, PerAddressRate } from "./anonymous.js";
import type { AnonymousLimits } from "./anonymous.js";
import type { AnonymousCaps } from "../../domain/secrets/model.js";
import { SETTINGS } from "../../config/settings.js";
import { loadAssets } from "./assets.js";
import type { ShareClient, ShareMissGuard } from "./share-guard.js";
import type { Asset } from "./assets.js";
import { anonymousFileLimit, CreatePage } from "./create-page.js";
import { MessagePage } from "./layout.js";
import { newNonce, setPageHeaders } from "./security.js";
import { SharePage } from "./share-page.js";
import { stringsFor } from "./strings.js";

/** The share pages' settings (docs/share.md, "Settings"). */
export interface ShareSettings {
  /** VAULT_SHARE_PAGE: false turns `/`, `/s/...` and POST /s off (404). */
  page: boolean;
  /** VAULT_SHARE_ANONYMOUS: the create page may make public secrets without a token. */
  anonymous: boolean;
  /** Anonymous creates per client address per minute. */
  anonymousPerMinute: number;
  /** Anonymous creates per minute in all (default DEFAULT_ANONYMOUS_LIMITS). */
  anonymousTotalPerMinute?: number | undefined;
  /** The anonymous links' count and byte caps (default DEFAULT_ANONYMOUS_LIMITS). */
  anonymousCaps?: AnonymousCaps | undefined;
}

/** The defaults of the anonymous links' caps (docs/configuration.md, VAULT_SHARE_ANONYMOUS_*). */
export const DEFAULT_ANONYMOUS_LIMITS: { totalPerMinute: number; caps: AnonymousCaps } = {
  totalPerMinute: SETTINGS.shareAnonymousTotalPerMinute.default,
  caps: {
    maxSecrets: SETTINGS.shareAnonymousMaxSecrets.default,
    maxBytes: SETTINGS.shareAnonymousMaxBytes.default,
    netMaxSecrets: SETTINGS.shareAnonymousNetMaxSecrets.default,
    netMaxBytes: SETTINGS.shareAnonymousNetMaxBytes.default,
  },
};

/** What the share pages need, from createApp. */
export interface SharePageDeps {
  tx: UnitOfWork<Work>;
  secrets: SecretLifecycle;
  /** Receipts: an anonymous link is made with one (docs/share.md, "Receipts"). */
  receipts: Receipts;
  /** Idempotency keys (docs/api.md, "Retries"): a retried reveal gets its first answer. */
  idempotency: IdempotencyKeys;
  /** The audit log: a refused reveal proof is recorded (docs/share.md, "The reveal proof"). */
  audit: ChangeAudit;
  settings: ShareSettings;
  trustProxy: boolean;
  /**
   * The share pages' own limiter (share-guard.ts): a miss under /s/ counts
   * there, never against the API's brute-force guard, so it never refuses a
   * token holder (docs/share.md, "Misses and refusals").
   */
  shareGuard: ShareMissGuard;
  maxValueBytes: number;
  /** Largest file of an end-to-end link, bytes (VAULT_MAX_FILE_BYTES): an anonymous link's file is bounded by it too. */
  maxFileBytes: number;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /** Base of public links (VAULT_PUBLIC_URL), for the CLI line of the no-script text. */
  publicUrl: () => string;
}

/**
 * Mounts `/assets/<file>` (the pages' stylesheet and scripts, read once),
 * for the share pages and the console alike; an unknown file is the API's
 * JSON 404.
 */
export function mountAssets(app: Hono<AppEnv>): void {
  let assets: Map<string, Asset> | undefined;
  app.get("/assets/:file", (c) => {
    assets ??= loadAssets();
    const asset = assets.get(c.req.param("file"));
    if (asset === undefined) return c.json({ error: "not found" }, 404);
    setPageHeaders(c);
    return c.body(asset.body, 200, { "Content-Type": asset.type });
  });
}

/** True for the paths the share pages answer without a bearer token: `/`, `/s`, `/s/...`, `/assets/...`. */
export function isSharePagePath(path: string): boolean {
  return path === "/" || path === "/s" || path.startsWith("/s/") || path.startsWith("/assets/");
}

/**
 * The reveal proof of `POST /s/<id>/reveal` (docs/share.md, "The reveal
 * proof"): the JSON body's `proof` (a string), or undefined for no body, a
 * body that is not JSON or has none. Never an error: a missing or malformed
 * proof is a wrong one, refused by the reveal when the secret needs one.
 */
export async function proofOf(c: Context<AppEnv>): Promise<string | undefined> {
  if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) return undefined;
  try {
    const body = await readJsonObject(c);
    return typeof body.proof === "string" ? body.proof : undefined;
  } catch (err) {
    if (err instanceof ApiError && err.status === 413) throw err;
    return undefined;
  }
}

/** A request's client: its address and whether a trusted proxy forwarded it (a forwarded loopback is counted). */
type Client = ShareClient;

/** The client of a share or request page's request: the socket's address, or a trusted proxy's forwarded one. */
export function clientOf(c: Context<AppEnv>, trustProxy: boolean): Client {
  const forwarded = trustProxy ? forwardedIp(c) : undefined;
  return { ip: forwarded ?? socketIp(c), forwarded: forwarded !== undefined };
}

/** The audit origin of what the share pages do: actor `share-page`, the client's address. */
export function shareOrigin(ip: string | null): Origin {
  return { actor: "share-page", principalId: null, ip, recorded: false };
}

/** From a page's path back to the vault's root: `""` for `/`, `../` for `/s/<id>`. */
function rootOf(path: string): string {
  const depth = Math.max(0, path.split("/").length - 2);
  return "../".repeat(depth);
}

/**
 * The client of a token-less read (`POST /s/<id>/reveal`, `POST
 * /r/<id>/reveal`), refused first when its address is over the share pages'
 * limiter of misses and refusals (docs/share.md, "Misses and refusals").
 * @throws ApiError 429 with Retry-After.
 */
export function refuseBlocked(c: Context<AppEnv>, deps: Pick<SharePageDeps, "shareGuard" | "trustProxy">): Client {
  const client = clientOf(c, deps.trustProxy);
  const waitMs = deps.shareGuard.retryAfterMs(client);
  if (waitMs > 0) {
    throw new ApiError(429, "too many refused requests from this address (links that do not exist, wrong reveal proofs)", { headers: { "Retry-After": String(Math.ceil(waitMs / 1000)) } });
  }
  return client;
}

/**
 * Runs a token-less reveal's unit of work (docs/share.md, "The recipient
 * page" and "The reveal proof"): a refusal of the lifecycle (VaultError:
 * gone meanwhile, past its TTL, which is expired first) is a miss.
 * @returns what `reveal` came to, `missing` for a refusal.
 * @throws whatever else `reveal` throws.
 */
export async function runReveal<T extends { kind: string }>(
  deps: Pick<SharePageDeps, "tx" | "secrets">,
  origin: Origin,
  reveal: () => Promise<T | { kind: "missing" }>,
): Promise<T | { kind: "missing" }> {
  try {
    return await reveal();
  } catch (err) {
    if (!(err instanceof VaultError)) throw err;
    await afterRefusal(deps, err, origin);
    return { kind: "missing" };
  }
}

/** The 403 body of a refused reveal proof; `burned`: it was the refusal that reached max_failed_reveals. */
function refusalOf(burned: boolean): { error: string; message: string } {
  return {
    error: "the reveal proof is missing or wrong",
    message: burned ? "too many wrong proofs: the secret is destroyed" : "the link is incomplete or damaged, or the passphrase is wrong; nothing was read",
  };
}

/**
 * The answer of a token-less reveal's outcome: a read answers the API's
 * read body, never cached; a miss 404 and a refused proof 403, both counted
 * against the share pages' limiter (docs/share.md, "Misses and refusals").
 * @throws ApiError 404 or 403.
 */
export function answerReveal(c: Context<AppEnv>, deps: Pick<SharePageDeps, "shareGuard">, client: Client, outcome: RevealOutcome): Response {
  if (outcome.kind !== "read") {
    // A refused proof counts against the brute-force guard as a miss does.
    deps.shareGuard.countRefusal(client);
    if (outcome.kind === "missing") throw new ApiError(404, "not available");
    const refused = refusalOf(outcome.burned);
    throw new ApiError(403, refused.error, { message: refused.message });
  }
  const read = outcome.read;
  setPageHeaders(c);
  return c.json(readJson(read.secret, read.value), 200);
}

/**
 * `POST /s/<id>/reveal` with an Idempotency-Key (docs/api.md, "Retries"):
 * the reveal's outcome is kept with its change (a read, or a refused
 * proof's count) and a retry gets the same answer (a read's value again,
 * no second read). A refusal of the lifecycle (gone meanwhile, past its
 * TTL) keeps nothing and is a miss, as without the key.
 */
async function revealOnce(
  c: Context<AppEnv>,
  deps: SharePageDeps,
  client: Client,
  id: string,
  proof: string | undefined,
  origin: Origin,
): Promise<Response> {
  setPageHeaders(c);
  const render = (outcome: RevealOutcome): Answer => {
    if (outcome.kind === "read") return [200, readJson(outcome.read.secret, outcome.read.value)];
    if (outcome.kind === "missing") return [404, { error: "not available" }];
    return [403, refusalOf(outcome.burned)];
  };
  let res: Response;
  try {
    res = await answerOnce(
      c,
      deps.idempotency,
      (fn) => deps.tx.run((w) => fn(w, GLOBAL_SCOPE)),
      (w) => revealPublic(w, { secrets: deps.secrets, audit: deps.audit }, id, proof, origin),
      render,
      { proof: proof ?? null },
    );
  } catch (err) {
    if (!(err instanceof VaultError)) throw err;
    await afterRefusal(deps, err, origin);
    return answerReveal(c, deps, client, { kind: "missing" });
  }
  // A miss or a refused proof counts against the share pages' limiter, replayed or not.
  if (res.status !== 200) deps.shareGuard.countRefusal(client);
  return res;
}

/**
 * Mounts the share pages (docs/share.md) on `app`, before the API's routes:
 *
 * - `GET /`: the create page; `POST /s`: an anonymous create when
 *   VAULT_SHARE_ANONYMOUS is on (else 404);
 * - `GET /s/<id>`: the recipient page of a public secret: what HEAD knows
 *   (expiry, reads left) and a Reveal button; it reads and counts nothing;
 * - `POST /s/<id>/reveal`: one read through the secret lifecycle (audit actor
 *   `share-page`, burn at max_reads, events), answered as the API's read;
 * - `POST /s/<id>/destroy`: the recipient page's "Destroy it now", with the
 *   reveal's proof (destroyPublic): 200 `{state: "deleted"}`, 403 a wrong
 *   proof, 404 gone; audit actor `share-page`;
 * - anything else under `/s/`: the same "not available" page, 404, whatever
 *   exists (a keyed or org secret's name is never reachable here);
 *
 * Misses under /s/ count against the share pages' own limiter (429 under
 * /s/ once over it; share-guard.ts), never against the API's brute-force guard.
 * With VAULT_SHARE_PAGE=false every one of these answers the API's JSON 404.
 */
export function mountSharePages(app: Hono<AppEnv>, deps: SharePageDeps): void {
  if (!deps.settings.page) return;
  const anonymousRate = new PerAddressRate(deps.settings.anonymousPerMinute, 60_000, deps.now);
  const anonymousLimits: AnonymousLimits = {
    caps: deps.settings.anonymousCaps ?? DEFAULT_ANONYMOUS_LIMITS.caps,
    total: new GlobalRate(deps.settings.anonymousTotalPerMinute ?? DEFAULT_ANONYMOUS_LIMITS.totalPerMinute, 60_000, deps.now),
  };
  const html = (c: Context<AppEnv>, status: 200 | 404 | 429, nonce: string | undefined, page: ReturnType<typeof MessagePage>) => {
    setPageHeaders(c, nonce);
    return c.html(page, status);
  };
  const notAvailable = (c: Context<AppEnv>, client: Client) => {
    deps.shareGuard.countRefusal(client);
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 404, undefined, <MessagePage s={s} root={rootOf(c.req.path)} title={s.notAvailableTitle} lead={s.notAvailableLead} />);
  };
  const blocked = (c: Context<AppEnv>, client: Client): Response | Promise<Response> | undefined => {
    const waitMs = deps.shareGuard.retryAfterMs(client);
    if (waitMs <= 0) return undefined;
    c.header("Retry-After", String(Math.ceil(waitMs / 1000)));
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 429, undefined, <MessagePage s={s} root={rootOf(c.req.path)} title={s.tooManyTitle} lead={s.tooManyLead} />);
  };

  app.get("/", (c) => {
    const nonce = newNonce();
    const s = stringsFor(c.req.header("accept-language"));
    return html(c, 200, nonce, <CreatePage
        s={s}
        root=""
        nonce={nonce}
        anonymous={deps.settings.anonymous}
        maxFileBytes={deps.maxFileBytes}
        anonymousFileBytes={anonymousFileLimit(deps.maxFileBytes, MAX_BODY_BYTES)}
      />);
  });

  app.post("/s", async (c) => {
    if (!deps.settings.anonymous) return c.json({ error: "not found" }, 404);
    const { ip } = clientOf(c, deps.trustProxy);
    const raw = withoutNulls(await readJsonObject(c));
    const { secret, receipt } = await anonymousCreate(deps, raw, ip, anonymousRate, anonymousLimits, shareOrigin(ip));
    return c.json({ id: secret.key, url: `${deps.publicUrl()}/s/${secret.key}`, receipt }, 201);
  });

  app.get("/s/:id", async (c) => {
    const client = clientOf(c, deps.trustProxy);
    const refused = blocked(c, client);
    if (refused !== undefined) return refused;
    const id = c.req.param("id");
    if (!PUBLIC_ID_PATTERN.test(id)) return notAvailable(c, client);
    const found = await deps.tx.run(async (w) => {
      const meta = await deps.secrets.peek(w, GLOBAL_SCOPE, id, shareOrigin(client.ip));
      if (meta?.isPublic !== true) return undefined;
      return { meta, needsProof: await revealNeedsProof(w, id), fileMeta: await publicFileMeta(w, id) };
    });
    if (found === undefined) return notAvailable(c, client);
    const { meta, needsProof, fileMeta } = found;
    const nonce = newNonce();
    const s = stringsFor(c.req.header("accept-language"));
    const facts = {
      expiresAt: meta.expiresAt === null ? null : Math.floor(meta.expiresAt / 1000),
      readsLeft: meta.maxReads === null ? null : Math.max(0, meta.maxReads - meta.readCount),
    };
    const cli = `ephemeral-vault get '${deps.publicUrl()}/s/${id}#...'`;
    return html(c, 200, nonce, <SharePage s={s} root={rootOf(c.req.path)} nonce={nonce} facts={facts} cli={cli} needsProof={needsProof} fileMeta={fileMeta} />);
  });

  app.post("/s/:id/reveal", async (c) => {
    const client = refuseBlocked(c, deps);
    const id = c.req.param("id");
    const origin = shareOrigin(client.ip);
    const proof = await proofOf(c);
    if (c.req.header(IDEMPOTENCY_HEADER) !== undefined && PUBLIC_ID_PATTERN.test(id)) return revealOnce(c, deps, client, id, proof, origin);
    // Only a public secret is read here: looked at first, in the same unit of work, so no other kind is ever counted.
    const outcome = await runReveal(deps, origin, async () =>
      PUBLIC_ID_PATTERN.test(id) ? deps.tx.run((w) => revealPublic(w, { secrets: deps.secrets, audit: deps.audit }, id, proof, origin)) : { kind: "missing" },
    );
    return answerReveal(c, deps, client, outcome);
  });

  // A link holder destroys what they could read (docs/share.md, "Receipts"): the reveal's proof, no token, no receipt.
  app.post("/s/:id/destroy", async (c) => {
    const client = refuseBlocked(c, deps);
    const id = c.req.param("id");
    const origin = shareOrigin(client.ip);
    const proof = await proofOf(c);
    const outcome = await runReveal(deps, origin, async () =>
      PUBLIC_ID_PATTERN.test(id) ? deps.tx.run((w) => destroyPublic(w, deps, id, proof, origin)) : { kind: "missing" as const },
    );
    if (outcome.kind !== "deleted") {
      deps.shareGuard.countRefusal(client);
      if (outcome.kind === "missing") throw new ApiError(404, "not available");
      throw new ApiError(403, "the reveal proof is missing or wrong", { message: "only the whole link can destroy it; nothing was destroyed" });
    }
    setPageHeaders(c);
    return c.json({ state: "deleted" }, 200);
  });

  app.all("/s", (c) => notAvailable(c, clientOf(c, deps.trustProxy)));
  app.all("/s/*", (c) => notAvailable(c, clientOf(c, deps.trustProxy)));
}

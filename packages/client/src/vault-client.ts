import { VaultApiError, VaultInputError } from "./errors.js";
import { encodeKey, seg, Transport } from "./http.js";
import type { FetchLike, TransportLimits } from "./http.js";
import { retryPolicy } from "./retry.js";
import type { RetryOptions } from "./retry.js";
import { AuditApi, KeysApi, MeApi, OrgsApi, WebhooksApi } from "./resources.js";
import { sealEnvelope, sealFileEnvelope } from "./envelope.js";
import { sealFileMeta } from "./file-meta.js";
import type { Opened } from "./envelope.js";
import { linkFragment, parseShareLink, revealLink } from "./share-link.js";
import { awaitAnswer, makeRequest, readAnswerOnce, RequestsApi } from "./requests.js";
import { requestRevealProof } from "./request-envelope.js";
import { destroyReceipt, fetchReceipt, parseReceipt } from "./receipts.js";
import { pollDeviceLogin, startDeviceLogin } from "./sso.js";
import type { DeviceLogin, LoginKey } from "./sso.js";
import type {
  AnswerRead,
  AwaitAnswerOptions,
  ListOptions,
  MadeRequest,
  OpenOptions,
  PatchOptions,
  PutOptions,
  Receipt,
  RequestOptions,
  SecretPage,
  SecretRead,
  ShareFile,
  ShareOptions,
  Shared,
} from "./types.js";
import type { ResponseOf } from "./types.js";

/** The vault address when neither `addr` nor VAULT_ADDR is given. */
export const DEFAULT_ADDR = "http://127.0.0.1:8484";

/** Options of new VaultClient(). */
export interface VaultClientOptions {
  /** Base address; default VAULT_ADDR (where `process` exists), else http://127.0.0.1:8484. */
  addr?: string | undefined;
  /** Bearer token (master key, scoped key or principal key); default VAULT_TOKEN where `process` exists. */
  token?: string | undefined;
  /**
   * An org id: the secret verbs (and prune) then act on /orgs/{org}/secrets
   * (use a principal key). Default VAULT_ORG where `process` exists; null:
   * global secrets whatever VAULT_ORG says.
   */
  org?: string | null | undefined;
  /** The fetch to use; default globalThis.fetch. */
  fetch?: FetchLike | undefined;
  /**
   * Milliseconds one call may take, answer and body together, its retries
   * and the waits between them included; default DEFAULT_TIMEOUT_MS (30 s);
   * 0: no limit. When it runs out the request is abandoned and rejects with
   * VaultConnectionError (`timeoutMs` set).
   */
  timeoutMs?: number | undefined;
  /**
   * How a call whose answer was lost is sent again (docs/client.md,
   * "Retries"): `attempts` in all (default 4), waits from `baseDelayMs`
   * (default 250) doubling up to `maxDelayMs` (default 5000), with jitter, or
   * the answer's Retry-After (one longer than maxDelayMs ends the retries).
   * A 503 or a reset connection is retried for the calls whose route takes
   * `Idempotency-Key` (each sends a fresh key, the same on each retry: create,
   * replace, get, patch, delete, share, and open()'s reveal) and for reads
   * that change nothing (lists, health, exists()); any other write only when
   * the connection was refused, nothing sent. false: one attempt, no key sent.
   * Omitted fields take the defaults.
   */
  retry?: Partial<RetryOptions> | false | undefined;
  /** Aborts every request of this client; an aborted request rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** The default time limit of one call (its retries included), milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** VAULT_* from the environment, where there is a `process` (Node, Bun, Deno's node compat). */
function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name];
  return value === "" ? undefined : value;
}

/**
 * A typed client of the vault's HTTP API, over fetch (Node 20+, browsers,
 * Deno, Bun, workers). It never loads server code. Secret verbs are named
 * like the CLI's (put, replace, get, share, list, delete, patch, exists) and act on
 * global secrets, or on an org's secrets when `org` is set; the other
 * resources are grouped: `keys`, `audit`, `webhooks`, `orgs`, `me`, `requests`;
 * request() and awaitAnswer() ask someone for a secret (docs/requests.md).
 *
 * Every method throws VaultApiError when the API answers 400 or more
 * (`status`, `error`, `message`, `detail`, `retryAfter` seconds),
 * VaultProtocolError when what answers is not a vault (another web server),
 * and VaultConnectionError when the vault is not reachable or does not answer
 * within `timeoutMs` (naming the address); before sending anything, it throws
 * VaultInputError for a key with an empty, `.` or `..` segment or an id that
 * is empty, `.` or `..` (such a path would reach another route). Times are Unix seconds; TTLs seconds.
 * A call whose answer was lost (a 503, a cut connection) is sent again first,
 * by the `retry` option, the secret verbs with an Idempotency-Key
 * (docs/client.md, "Retries"); what the last attempt met is thrown.
 */
export class VaultClient {
  /** The base address requests go to, without a trailing slash. */
  readonly addr: string;
  /** The org the secret verbs act on, or undefined for global secrets. */
  readonly org: string | undefined;
  /** Scoped API keys: /keys. */
  readonly keys: KeysApi;
  /** The global audit log: /audit. */
  readonly audit: AuditApi;
  /** Global webhooks and their deliveries: /webhooks. */
  readonly webhooks: WebhooksApi;
  /** Organizations and, through `orgs.of(id)`, their principals, principal keys, roles, webhooks, audit and prune. */
  readonly orgs: OrgsApi;
  /** The calling principal: /me and /me/keys. */
  readonly me: MeApi;
  /** Requests made with this token: list, get, delete (/requests, or /orgs/{org}/requests with `org`). */
  readonly requests: RequestsApi;
  readonly #t: Transport;
  readonly #fetch: FetchLike;
  readonly #limits: TransportLimits;

  /**
   * @param options addr, token, org, fetch, timeoutMs, signal, retry; each optional (see VaultClientOptions for defaults).
   * @throws RangeError for a negative or NaN timeoutMs, or a retry whose attempts is not a whole number of at least 1
   *   or whose delays are negative.
   */
  constructor(options: VaultClientOptions = {}) {
    const fetchFn = options.fetch ?? ((input: string, init?: RequestInit) => globalThis.fetch(input, init));
    this.#fetch = fetchFn;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!(timeoutMs >= 0)) throw new RangeError("timeoutMs must be 0 (no limit) or a positive number of milliseconds");
    this.#limits = { timeoutMs, signal: options.signal, retry: retryPolicy(options.retry) };
    this.#t = new Transport(options.addr ?? env("VAULT_ADDR") ?? DEFAULT_ADDR, options.token ?? env("VAULT_TOKEN"), fetchFn, this.#limits);
    this.addr = this.#t.addr;
    this.org = options.org === null ? undefined : (options.org ?? env("VAULT_ORG"));
    this.keys = new KeysApi(this.#t);
    this.audit = new AuditApi(this.#t);
    this.webhooks = new WebhooksApi(this.#t, "/webhooks");
    this.orgs = new OrgsApi(this.#t);
    this.me = new MeApi(this.#t);
    this.requests = new RequestsApi(this.#t, this.org);
  }

  /** /secrets, or /orgs/{org}/secrets with `org` set. */
  #secrets(): string {
    return this.org === undefined ? "/secrets" : `/orgs/${seg(this.org)}/secrets`;
  }

  /**
   * The body of a keyed create or replace: `value`, the limits and, for org
   * secrets, `delete: false` (seal) and `allowed_keys`.
   * @throws Error when `seal` or `allowedKeys` is used without `org` (global secrets burn).
   */
  #secretBody(value: string, options: PutOptions): Record<string, unknown> {
    if (this.org === undefined && (options.seal || options.allowedKeys !== undefined)) {
      throw new Error("seal and allowedKeys apply to org secrets only (set org)");
    }
    const body: Record<string, unknown> = { value };
    if (options.ttlSeconds !== undefined) body.ttl_seconds = options.ttlSeconds;
    if (options.maxReads !== undefined) body.max_reads = options.maxReads;
    if (options.seal) body.delete = false;
    if (options.allowedKeys !== undefined) body.allowed_keys = options.allowedKeys;
    return body;
  }

  /**
   * Creates a keyed secret (POST /secrets, or /orgs/{org}/secrets).
   * @param key the key; may contain `/`.
   * @param value the value, any string (sent as is).
   * @param options ttlSeconds (seconds), maxReads, seal (org secrets only: `delete: false`), allowedKeys (org only).
   * @returns `{key}`.
   * @throws VaultApiError 409 when a live secret has the key, 402 at the free-tier limit, 400/413 on bad input;
   *   a plain Error when `seal` or `allowedKeys` is used without `org` (global secrets burn).
   */
  async put(key: string, value: string, options: PutOptions = {}): Promise<{ key: string }> {
    const body = this.#secretBody(value, options);
    body.key = key;
    return this.#t.json({ method: "POST", path: this.#secrets(), body, idempotent: true });
  }

  /**
   * Creates or replaces a keyed secret (PUT /secrets/{key}, or
   * /orgs/{org}/secrets/{key}): a live secret's value and limits are
   * replaced in one transaction (read_count back to 0, created_at kept, a
   * sealed org secret active again), so no reader sees it missing in
   * between. The options are the whole new limits: one omitted means none
   * (no TTL, no read limit, burn, org-wide).
   * @param key the key; may contain `/`.
   * @param value the new value, any string (sent as is).
   * @param options as put(): ttlSeconds (seconds), maxReads, seal and allowedKeys (org only).
   * @returns `{key, updated}`: updated true when a live secret was replaced (200), false when it was created (201).
   * @throws VaultApiError 404 for a public secret's id, 402 when a create meets the free-tier limit, 403, 400/413 on bad input;
   *   a plain Error when `seal` or `allowedKeys` is used without `org`.
   */
  async replace(key: string, value: string, options: PutOptions = {}): Promise<{ key: string; updated: boolean }> {
    const body = this.#secretBody(value, options);
    const res = await this.#t.answer<{ key: string; updated?: boolean }>({ method: "PUT", path: `${this.#secrets()}/${encodeKey(key)}`, body, idempotent: true });
    return { key: res.body.key, updated: res.status === 200 && res.body.updated === true };
  }

  /**
   * Retrieves a secret and counts the read (the read reaching max_reads burns
   * it, or seals an org secret created with seal).
   * @returns the whole retrieve body: `value`, `key` (or `id`) and, where the server sends them, metadata.
   * @throws VaultApiError 404 when missing, expired or burned; 410 when sealed.
   */
  async get(key: string): Promise<SecretRead> {
    return this.#t.json({ method: "GET", path: `${this.#secrets()}/${encodeKey(key)}`, idempotent: true });
  }

  /**
   * Creates a public secret, a dead drop with a server-made id (POST /secrets
   * without `key`); always global, whatever `org`. By default the value is
   * encrypted here first (the end-to-end envelope of docs/share.md): the
   * vault stores only ciphertext and the key is in the link's fragment.
   * @param options ttlSeconds (seconds) and maxReads (omitted: unlimited; the CLI defaults to 1);
   *   passphrase (the recipient must type it too); plain: store the value itself (the API's read returns it);
   *   maxFailedReveals: the secret burns after that many refused reveal proofs (docs/share.md, "The reveal proof").
   *   An end-to-end link sends its `reveal_check`: only the whole link (and passphrase) can spend a read.
   * @returns `{id, url, receipt}`: 64 hex characters, the shareable link (`.../s/<id>#<key>`, without `#<key>` when plain)
   *   and the sender's receipt (`vrc_...`, shown once; see receipt()).
   * A file (`{file: {name, type, bytes}}`) is sealed in an envelope of
   * version 3 (docs/share.md, "Files"): the name and type inside the
   * ciphertext; the vault bounds it by VAULT_MAX_FILE_BYTES (413 above).
   * Without a passphrase it also sends `file_meta`, the name, type and size
   * encrypted under the link key, which the recipient page shows before the
   * reveal (docs/share.md, "The file's metadata before the reveal").
   * @throws VaultApiError as POST /secrets (402, 413, 400); a plain Error for `plain` with a `passphrase` or a file,
   *   or a file whose name (1 to 255 UTF-8 bytes) or media type is out of shape.
   */
  async share(value: string | ShareFile, options: ShareOptions = {}): Promise<Shared> {
    if (options.passphrase === "") throw new Error("an empty passphrase: leave it out");
    if (options.plain === true && options.passphrase !== undefined) throw new Error("a passphrase needs the end-to-end envelope: leave out plain");
    if (options.plain === true && typeof value !== "string") throw new Error("a file is always shared end to end: leave out plain");
    const sealed =
      typeof value !== "string"
        ? await sealFileEnvelope(value.file, { passphrase: options.passphrase })
        : options.plain === true
          ? undefined
          : await sealEnvelope(value, { passphrase: options.passphrase });
    const body: Record<string, unknown> = { value: sealed?.envelope ?? value };
    if (options.ttlSeconds !== undefined) body.ttl_seconds = options.ttlSeconds;
    if (options.maxReads !== undefined) body.max_reads = options.maxReads;
    if (sealed?.revealCheck !== undefined) body.reveal_check = sealed.revealCheck;
    // A file without a passphrase: its name, type and size for the recipient page before the reveal (docs/share.md, "Files").
    if (sealed !== undefined && typeof value !== "string" && options.passphrase === undefined) {
      body.file_meta = await sealFileMeta(sealed.linkKey, { name: value.file.name, type: value.file.type, size: value.file.bytes.length });
    }
    if (options.maxFailedReveals !== undefined) {
      if (sealed === undefined) throw new Error("maxFailedReveals needs the end-to-end envelope: leave out plain");
      body.max_failed_reveals = options.maxFailedReveals;
    }
    const res = await this.#t.json<ResponseOf<"/secrets", "post", 201>>({ method: "POST", path: "/secrets", body, idempotent: true });
    if (!("id" in res) || typeof res.id !== "string" || typeof res.url !== "string" || typeof res.receipt !== "string") {
      throw new VaultApiError(500, "unexpected response: no id, url and receipt", undefined, "POST /secrets");
    }
    const url = sealed === undefined ? res.url : `${res.url}#${linkFragment(sealed.linkKey, options.passphrase !== undefined, typeof value !== "string")}`;
    return { id: res.id, url, receipt: res.receipt };
  }

  /**
   * What a share's receipt says (docs/share.md, "Receipts"): GET
   * /receipts/<token>, without this client's token (the receipt is the
   * capability); never the value.
   * @param receipt the bare token (`vrc_...`), or a receipt link `<vault>/receipts/vrc_...` (then asked at the link's address).
   * @returns `{state, createdAt, expiresAt, maxReads, readCount, lastReadAt}`, times in Unix seconds.
   * @throws VaultInputError (`field: "receipt"`) for a text that is neither (nothing sent); VaultApiError 404 for an unknown receipt.
   */
  async receipt(receipt: string): Promise<Receipt> {
    const { t, token } = this.#receiptTransport(receipt);
    return fetchReceipt(t, token);
  }

  /**
   * Destroys a share's secret now with its receipt: POST
   * /receipts/<token>/destroy, without this client's token.
   * @param receipt the bare token or a receipt link, as for receipt().
   * @returns the receipt after it (state `deleted`).
   * @throws VaultInputError for a text that is not a receipt; VaultApiError 409 when the secret ended already
   *   (burned, expired or deleted), 404 for an unknown receipt.
   */
  async destroyByReceipt(receipt: string): Promise<Receipt> {
    const { t, token } = this.#receiptTransport(receipt);
    return destroyReceipt(t, token);
  }

  /**
   * Starts a sign-in with the vault's identity provider for a program
   * without a browser (docs/sso.md, "The CLI"): POST /oidc/device, without
   * this client's token. Show the person `userCode` and `verificationUri`,
   * then poll pollDeviceLogin() every `interval` seconds.
   * @throws VaultApiError 404 when the vault has no single sign-on, 502 when the provider refused.
   */
  async startDeviceLogin(): Promise<DeviceLogin> {
    return startDeviceLogin(this.#anonymous());
  }

  /**
   * One poll of a started sign-in: POST /oidc/device/token, without this
   * client's token.
   * @returns the principal key minted for the person (shown once; valid until `validBefore`, Unix seconds),
   *   or `"pending"` / `"slow_down"` while they have not approved.
   * @throws VaultApiError 400 `expired_token` when it ended or expired, 403 when the sign-in was refused.
   */
  async pollDeviceLogin(deviceId: string): Promise<LoginKey | "pending" | "slow_down"> {
    return pollDeviceLogin(this.#anonymous(), deviceId);
  }

  #anonymous(): Transport {
    return new Transport(this.addr, undefined, this.#fetch, this.#limits);
  }

  /** The receipt's token and a token-less transport to its vault (the link's address, else this client's). */
  #receiptTransport(receipt: string): { t: Transport; token: string } {
    const ref = parseReceipt(receipt);
    if (ref === undefined) throw new VaultInputError("receipt");
    return { t: new Transport(ref.base ?? this.addr, undefined, this.#fetch, this.#limits), token: ref.token };
  }

  /**
   * Reveals a share link made by share(), the CLI's `share` or the create
   * page (`.../s/<id>#<key>`), or a plain API link (`.../secrets/<id>`): one
   * read, which counts and may burn the secret; the envelope is opened here
   * with the fragment's key. A `/s/` link is read at its own address without
   * a token; a `/secrets/` link through this client (its address and token).
   * @param options passphrase, when the link was made with one.
   * @returns the value (a string), or `{file: {name, type, bytes}}` for a
   *   link to a file (docs/share.md, "Files"); save it under
   *   safeFileName(name), never a path taken from it as is.
   * @throws VaultApiError 404 when the secret is gone (or never was); a plain
   *   Error for a text that is not a share link; EnvelopeError (`reason`
   *   "passphrase", "key" or "format") when it does not open.
   */
  async open(url: string, options: OpenOptions = {}): Promise<Opened> {
    const link = parseShareLink(url);
    if (link === undefined) throw new Error("not a share link: expected <vault>/s/<64 hex id>#<key> or <vault>/secrets/<id>");
    // A /s/ link is read at its own address, without a token, under this client's time limit and signal.
    const reveal = (base: string, id: string, proof: string | undefined) =>
      new Transport(base, undefined, this.#fetch, this.#limits).json<{ value: string }>({
        method: "POST",
        path: `/s/${id}/reveal`,
        ...(proof === undefined ? {} : { body: { proof } }),
        anonymous: true,
        label: "POST /s/<id>/reveal",
        idempotent: true,
      });
    return revealLink(link, reveal, this.#t, options.passphrase);
  }

  /**
   * Lists secrets' metadata, never values (GET /secrets needs an admin
   * token; org: the `l` letter). One page per call; pass `next_cursor` back
   * as `cursor` while it is present.
   * @param options `prefix` keeps entries whose key starts with it (filtered
   *   here, so a page may hold fewer than `limit`), `limit` 1-1000, `cursor`.
   */
  async list(options: ListOptions = {}): Promise<SecretPage> {
    const page = await this.#t.json<SecretPage>({
      method: "GET",
      path: this.#secrets(),
      query: { limit: options.limit, cursor: options.cursor },
    });
    const { prefix } = options;
    if (prefix === undefined || prefix === "") return page;
    return { ...page, secrets: page.secrets.filter((s) => typeof s.key === "string" && s.key.startsWith(prefix)) };
  }

  /**
   * Deletes a secret at once, whatever its TTL or remaining reads.
   * @returns `{deleted: true}`.
   * @throws VaultApiError 404 when missing.
   */
  async delete(key: string): Promise<{ deleted: boolean }> {
    return this.#t.json({ method: "DELETE", path: `${this.#secrets()}/${encodeKey(key)}`, idempotent: true });
  }

  /**
   * Sets a new TTL (seconds, from now) and/or a new read limit.
   * @returns `{key, updated: true}` (`id` for a public secret).
   * @throws VaultApiError 400 when neither option is given, 404 when missing.
   */
  async patch(key: string, options: PatchOptions): Promise<{ key?: string; id?: string; updated: boolean }> {
    const body: Record<string, unknown> = {};
    if (options.ttlSeconds !== undefined) body.ttl_seconds = options.ttlSeconds;
    if (options.maxReads !== undefined) body.max_reads = options.maxReads;
    return this.#t.json({ method: "PATCH", path: `${this.#secrets()}/${encodeKey(key)}`, body, idempotent: true });
  }

  /**
   * Whether a secret exists (HEAD): no read counted, nothing decrypted.
   * @returns true on 200, false on 404.
   * @throws VaultApiError for any other status (401, 403, ...).
   */
  async exists(key: string): Promise<boolean> {
    try {
      await this.#t.send({ method: "HEAD", path: `${this.#secrets()}/${encodeKey(key)}` });
      return true;
    } catch (err) {
      if (err instanceof VaultApiError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * Removes the tombstones of expired secrets: POST /prune (admin), or
   * POST /orgs/{org}/prune (the `C` letter) with `org` set.
   * @returns `{pruned}`, how many were removed.
   */
  async prune(): Promise<ResponseOf<"/prune", "post">> {
    const path = this.org === undefined ? "/prune" : `/orgs/${seg(this.org)}/prune`;
    return this.#t.json({ method: "POST", path });
  }

  /**
   * Asks someone for a secret (docs/requests.md): makes the asker's key pair
   * here (the private key is never sent) and POSTs /requests (or
   * /orgs/{org}/requests) with the public key and the reveal check.
   * @param options description (1-1000 characters), ttlSeconds (seconds), maxReads, org (default the client's; null: global).
   * @returns `{id, url, privateKey, privateUrl, expiresAt, request}`: send `url`; keep `privateKey` (or `privateUrl`), which alone reads the answer.
   * @throws VaultApiError as POST /requests (400, 402, 403).
   */
  async request(options: RequestOptions): Promise<MadeRequest> {
    const org = options.org === null ? undefined : (options.org ?? this.org);
    return makeRequest(this.#t, org, options);
  }

  /**
   * Waits for the answer of a request made by request(), then reads it once
   * (the read counts; the last one burns it) and opens it with the private
   * key. Polls POST /r/{id}/reveal with the key's reveal proof, at this
   * client's address and without the token; 409 is "not answered yet" and
   * counts nothing.
   * @param options timeoutMs (milliseconds; default: no limit), intervalMs (default 2000), signal.
   * @returns the value, byte-exact, with the read's facts (`spent`: it was the last read).
   * @throws AnswerTimeoutError when timeoutMs runs out (nothing read); VaultApiError 404 when the request is gone;
   *   EnvelopeError "key" for a private key that is malformed or not the request's (nothing read).
   */
  async awaitAnswer(id: string, privateKey: string, options: AwaitAnswerOptions = {}): Promise<AnswerRead> {
    return awaitAnswer(new Transport(this.addr, undefined, this.#fetch, this.#limits), id, privateKey, options);
  }

  /**
   * Reads a request's answer once if it has one, without waiting.
   * @returns the answer (as awaitAnswer), or undefined when nobody answered yet (nothing counted).
   * @throws as awaitAnswer, but never AnswerTimeoutError.
   */
  async readAnswer(id: string, privateKey: string): Promise<AnswerRead | undefined> {
    const { proof } = await requestRevealProof(privateKey);
    return readAnswerOnce(new Transport(this.addr, undefined, this.#fetch, this.#limits), id, privateKey, proof);
  }

  /** GET /health, unauthenticated: `{status: "ok"}`. */
  async health(): Promise<ResponseOf<"/health", "get">> {
    return this.#t.json({ method: "GET", path: "/health", anonymous: true });
  }

  /** GET /openapi.json: the server's OpenAPI 3.1 document. */
  async openapi(): Promise<Record<string, unknown>> {
    return this.#t.json({ method: "GET", path: "/openapi.json" });
  }
}

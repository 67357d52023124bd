import acme from "acme-client";
import type { Logger } from "../../log/log.js";
import { acmePaths, placeholderPair, readIfPresent, storedPairProblem, validityOf, writePrivateFile } from "./acme-files.js";
import { randomUUID } from "node:crypto";
import { AcmeRenewer, renewalTime } from "./acme-renewer.js";
import type { SharedAcme } from "./acme-shared.js";
import type { AttemptOutcome, Validity } from "./acme-renewer.js";
import type { ChallengeAnswerer } from "./redirect.js";
import { checkPair } from "./source.js";
import type { CertificatePair, CertificateSource } from "./source.js";

/** How long a node holds the renewal lease at most, ms: an order takes seconds; a node that died mid-order frees it after this. */
export const ACME_LEASE_MS = 10 * 60_000;
/** How long a node waits for the certificate of the node holding the lease before its attempt counts as failed, ms. */
export const ACME_LEASE_WAIT_MS = 2 * 60_000;
/** How often it looks for that certificate meanwhile, ms. */
const LEASE_POLL_MS = 1000;

/** What an AcmeCertificateSource orders, from where, and where it keeps it. */
export interface AcmeOptions {
  /** VAULT_ACME_DOMAINS: the names of the certificate (the first is its common name). */
  domains: string[];
  /** VAULT_ACME_EMAIL: the account's contact; undefined: none. */
  email: string | undefined;
  /** VAULT_ACME_DIRECTORY: the CA's directory URL. */
  directoryUrl: string;
  /** The data dir: the files live in its `acme/` (acme-files.ts). */
  dataDir: string;
  /** The first backoff wait after a failed attempt, ms (default ACME_BACKOFF_FIRST_MS). */
  backoffFirstMs?: number | undefined;
  /** Where the reason of a wait for the certificate is written (stderr), once per change. */
  say: (line: string) => void;
}

/**
 * The certificate source of VAULT_ACME_DOMAINS (docs/deploy.md "Certificates
 * by ACME"): the certificate is ordered from the ACME CA with acme-client
 * (RFC 8555), HTTP-01 answered by `challenge` on the redirect listener, kept
 * in the data dir (acme-files.ts) and renewed on AcmeRenewer's schedule (two
 * thirds of its lifetime, a doubling backoff after failures).
 *
 * open() makes it without any network request: a stored certificate that
 * still serves is current() at once (a restart orders nothing until its
 * renewal time); else current() is a self-signed placeholder and waiting()
 * says why until the first order succeeds. start() begins the schedule.
 */
export class AcmeCertificateSource implements CertificateSource {
  readonly #options: AcmeOptions;
  readonly #log: Logger;
  readonly #listeners = new Set<() => void>();
  readonly #tokens = new Map<string, string>();
  readonly #renewer: AcmeRenewer;
  #pair: CertificatePair;
  #waiting: string | undefined;
  #stored: Validity | undefined;
  #onAttempt: (outcome: AttemptOutcome) => void = () => {};
  #shared: SharedAcme | undefined;
  #closed = false;
  /** This process, as the renewal lease names it. */
  readonly #node = randomUUID();

  private constructor(options: AcmeOptions, log: Logger, pair: CertificatePair, stored: Validity | undefined, waiting: string | undefined) {
    this.#options = options;
    this.#log = log;
    this.#pair = pair;
    this.#stored = stored;
    this.#waiting = waiting;
    this.#renewer = new AcmeRenewer({
      now: Date.now,
      setTimer: (fn, ms) => {
        const timer = setTimeout(fn, ms);
        timer.unref();
        return () => clearTimeout(timer);
      },
      attempt: () => this.#attempt(),
      onAttempt: (outcome, detail) => this.#attempted(outcome, detail),
      backoffFirstMs: options.backoffFirstMs,
    });
  }

  /**
   * Reads the stored certificate, or makes the placeholder; no ACME request.
   * @throws the file system's error when `acme/` cannot be read (a missing file is not an error).
   */
  static async open(options: AcmeOptions, log: Logger): Promise<AcmeCertificateSource> {
    const paths = acmePaths(options.dataDir);
    const cert = readIfPresent(paths.cert);
    const key = readIfPresent(paths.key);
    let problem = "no certificate yet";
    if (cert !== undefined && key !== undefined) {
      const pair = { cert, key };
      const refused = storedPairProblem(pair, options.domains, Date.now());
      if (refused === undefined) {
        const validity = validityOf(cert);
        const info = checkPair(pair, { cert: paths.cert, key: paths.key });
        log.info({ certificate: info, next_renewal: new Date(renewalTime(validity)).toISOString() }, "ACME certificate loaded from the data dir");
        return new AcmeCertificateSource(options, log, pair, validity, undefined);
      }
      problem = refused;
    }
    const source = new AcmeCertificateSource(options, log, await placeholderPair(options.domains), undefined, `waiting for certificate: ${problem}, ordering it from ${options.directoryUrl}`);
    source.#say();
    return source;
  }

  /**
   * Starts the schedule: an order at once without a stored certificate, else at its renewal time.
   * @param onAttempt called after each attempt with its outcome (the metric vault_acme_renewals_total).
   * @param shared with several nodes on one database (PostgreSQL): each
   *   attempt first picks up a certificate another node ordered, and orders
   *   only with the renewal lease; challenges are answered from there too.
   */
  start(onAttempt: (outcome: AttemptOutcome) => void, shared?: SharedAcme): void {
    this.#onAttempt = onAttempt;
    this.#shared = shared;
    this.#renewer.start(this.#stored);
  }

  /** The pair served now: the ACME certificate, or the placeholder while waiting() says why. */
  current(): CertificatePair {
    return this.#pair;
  }

  /** Why there is no ACME certificate yet (`waiting for certificate: <reason>`); undefined once there is one. */
  waiting(): string | undefined {
    return this.#waiting;
  }

  /** The HTTP-01 answerer for the redirect listener: the key authorization of a token being validated (RFC 8555 §8.3). */
  readonly challenge: ChallengeAnswerer = (token) => this.#tokens.get(token) ?? this.#shared?.getChallenge(token);

  /** See CertificateSource.onChange. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops the schedule; an order under way ends without scheduling another. */
  close(): void {
    this.#closed = true;
    this.#renewer.stop();
  }

  /** Resolves when an order under way has ended (tests, a clean stop). */
  idle(): Promise<void> {
    return this.#renewer.idle();
  }

  #say(): void {
    if (this.#waiting !== undefined) this.#options.say(`ephemeral-vault: HTTPS ${this.#waiting}`);
  }

  /**
   * The ACME account: its key and URL at the CA when both are stored for
   * this directory; else a new key (stored), registered by the order.
   * acme-client registers an account it is given no URL for, and an
   * existing one it would then update with nothing new, which CAs refuse.
   */
  async #account(): Promise<{ accountKey: Buffer; accountUrl: string | undefined }> {
    const paths = acmePaths(this.#options.dataDir);
    const key = readIfPresent(paths.accountKey);
    const known = readIfPresent(paths.account);
    if (key !== undefined && known !== undefined) {
      const account = JSON.parse(known) as { directory?: string; url?: string };
      if (account.directory === this.#options.directoryUrl && typeof account.url === "string") return { accountKey: Buffer.from(key), accountUrl: account.url };
    }
    const accountKey = await acme.crypto.createPrivateEcdsaKey();
    writePrivateFile(paths.accountKey, accountKey.toString());
    this.#log.info({ path: paths.accountKey }, "ACME account key created");
    return { accountKey, accountUrl: undefined };
  }

  /**
   * One attempt. Alone: order. With a shared database: pick up a newer
   * certificate another node ordered; else order with the renewal lease;
   * else wait (ACME_LEASE_WAIT_MS) for the lease holder's certificate.
   */
  async #attempt(): Promise<{ validity: Validity; ordered: boolean }> {
    const shared = this.#shared;
    if (shared === undefined) return { validity: await this.#order(), ordered: true };
    const found = await this.#pickUp(shared);
    if (found !== undefined) return { validity: found, ordered: false };
    if (!(await shared.takeLease(this.#node, Date.now(), ACME_LEASE_MS))) {
      this.#log.info("ACME renewal lease held by another node: waiting for its certificate");
      const deadline = Date.now() + ACME_LEASE_WAIT_MS;
      while (Date.now() < deadline && !this.#closed) {
        await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
        const got = await this.#pickUp(shared);
        if (got !== undefined) return { validity: got, ordered: false };
      }
      throw new Error("another node holds the ACME renewal lease and its certificate did not come");
    }
    try {
      const validity = await this.#order();
      await shared.save(this.#pair);
      return { validity, ordered: true };
    } finally {
      await shared.releaseLease(this.#node).catch((err: unknown) => this.#log.warn({ err }, "ACME renewal lease not released (it lapses by itself)"));
    }
  }

  /** Installs the shared certificate when it is another than ours, serves our domains and is not due for renewal. */
  async #pickUp(shared: SharedAcme): Promise<Validity | undefined> {
    const pair = await shared.load();
    if (pair === undefined || pair.cert === this.#pair.cert) return undefined;
    if (storedPairProblem(pair, this.#options.domains, Date.now()) !== undefined) return undefined;
    const validity = validityOf(pair.cert);
    if (renewalTime(validity) <= Date.now()) return undefined;
    this.#install(pair, "ACME certificate picked up from the database");
    return validity;
  }

  /** Stores a pair in the data dir, serves it and tells the listeners. */
  #install(pair: CertificatePair, message: string): void {
    const paths = acmePaths(this.#options.dataDir);
    const info = checkPair(pair, { cert: "the ACME certificate", key: "its key" });
    // The key first: a crash between the two leaves a pair that does not match, refused at the next start.
    writePrivateFile(paths.key, pair.key);
    writePrivateFile(paths.cert, pair.cert);
    this.#pair = pair;
    this.#waiting = undefined;
    this.#log.info({ certificate: info }, message);
    for (const listener of this.#listeners) listener();
  }

  /** One order: account, CSR with a new key, HTTP-01, the chain; stored, then served. */
  async #order(): Promise<Validity> {
    const { domains, directoryUrl } = this.#options;
    this.#log.info({ domains, directory: directoryUrl }, "ACME certificate order started");
    const paths = acmePaths(this.#options.dataDir);
    const { accountKey, accountUrl } = await this.#account();
    const client = new acme.Client({ directoryUrl, accountKey, ...(accountUrl === undefined ? {} : { accountUrl }) });
    if (accountUrl === undefined) {
      // Registered and recorded before the order: a failed order does not cost another account (CAs limit them).
      const email = this.#options.email;
      await client.createAccount({ termsOfServiceAgreed: true, ...(email === undefined ? {} : { contact: [`mailto:${email}`] }) });
      writePrivateFile(paths.account, JSON.stringify({ directory: directoryUrl, url: client.getAccountUrl() }));
    }
    const key = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: domains[0], altNames: domains }, key);
    const cert = await this.#auto(client, csr);
    this.#install({ cert, key: key.toString() }, "ACME certificate installed");
    return validityOf(cert);
  }

  /** acme-client's whole order (RFC 8555 §7.4) with HTTP-01; @returns the PEM chain. */
  async #auto(client: acme.Client, csr: Buffer): Promise<string> {
    const shared = this.#shared;
    // The account is registered by #order: auto() only orders.
    return client.auto({
      csr,
      termsOfServiceAgreed: true,
      challengePriority: ["http-01"],
      // The CA validates anyway; a self-check through the public name fails behind port mappings.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        this.#tokens.set(challenge.token, keyAuthorization);
        // The CA's request may reach another node of the database.
        await shared?.putChallenge(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        this.#tokens.delete(challenge.token);
        await shared?.removeChallenge(challenge.token);
      },
    });
  }

  #attempted(outcome: AttemptOutcome, detail: { error?: unknown; next: number; failures: number }): void {
    const next = new Date(detail.next).toISOString();
    if (outcome === "success") {
      this.#log.info({ outcome, next_renewal: next }, "ACME certificate order succeeded");
    } else if (outcome === "picked_up") {
      this.#log.info({ outcome, next_renewal: next }, "ACME certificate of another node in use");
    } else {
      const error = detail.error instanceof Error ? detail.error.message : String(detail.error);
      this.#log.warn({ outcome, error, failures: detail.failures, next_attempt: next }, "ACME certificate order failed");
      if (this.#waiting !== undefined) {
        this.#waiting = `waiting for certificate: the last order failed (${error}); next attempt at ${next}`;
        this.#say();
      }
    }
    this.#onAttempt(outcome);
  }
}

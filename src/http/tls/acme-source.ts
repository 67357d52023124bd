import acme from "acme-client";
import type { Logger } from "../../log/log.js";
import { acmePaths, placeholderPair, readIfPresent, storedPairProblem, validityOf, writePrivateFile } from "./acme-files.js";
import { AcmeRenewer, renewalTime } from "./acme-renewer.js";
import type { AttemptOutcome, Validity } from "./acme-renewer.js";
import type { ChallengeAnswerer } from "./redirect.js";
import { checkPair } from "./source.js";
import type { CertificatePair, CertificateSource } from "./source.js";

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
      attempt: () => this.#order(),
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
   * @param onAttempt called after each order with its outcome (the metric vault_acme_renewals_total).
   */
  start(onAttempt: (outcome: AttemptOutcome) => void): void {
    this.#onAttempt = onAttempt;
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

  /** Unix ms of the next order; undefined while one runs or after close(). */
  nextAttempt(): number | undefined {
    return this.#renewer.next;
  }

  /** The HTTP-01 answerer for the redirect listener: the key authorization of a token being validated (RFC 8555 §8.3). */
  readonly challenge: ChallengeAnswerer = (token) => this.#tokens.get(token);

  /** See CertificateSource.onChange. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Stops the schedule; an order under way ends without scheduling another. */
  close(): void {
    this.#renewer.stop();
  }

  /** Resolves when an order under way has ended (tests, a clean stop). */
  idle(): Promise<void> {
    return this.#renewer.idle();
  }

  #say(): void {
    if (this.#waiting !== undefined) this.#options.say(`ephemeral-vault: HTTPS ${this.#waiting}`);
  }

  /** The account key, created (and stored) on the first order. */
  async #accountKey(): Promise<Buffer> {
    const path = acmePaths(this.#options.dataDir).accountKey;
    const stored = readIfPresent(path);
    if (stored !== undefined) return Buffer.from(stored);
    const key = await acme.crypto.createPrivateEcdsaKey();
    writePrivateFile(path, key.toString());
    this.#log.info({ path }, "ACME account key created");
    return key;
  }

  /** One order: account, CSR with a new key, HTTP-01, the chain; stored, then served. */
  async #order(): Promise<Validity> {
    const { domains, email, directoryUrl } = this.#options;
    this.#log.info({ domains, directory: directoryUrl }, "ACME certificate order started");
    const client = new acme.Client({ directoryUrl, accountKey: await this.#accountKey() });
    const key = await acme.crypto.createPrivateEcdsaKey();
    const [, csr] = await acme.crypto.createCsr({ commonName: domains[0], altNames: domains }, key);
    const cert = await client.auto({
      csr,
      ...(email === undefined ? {} : { email }),
      termsOfServiceAgreed: true,
      challengePriority: ["http-01"],
      // The CA validates anyway; a self-check through the public name fails behind port mappings.
      skipChallengeVerification: true,
      challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
        this.#tokens.set(challenge.token, keyAuthorization);
      },
      challengeRemoveFn: async (_authz, challenge) => {
        this.#tokens.delete(challenge.token);
      },
    });
    const pair = { cert, key: key.toString() };
    const paths = acmePaths(this.#options.dataDir);
    const info = checkPair(pair, { cert: "the ACME certificate", key: "its key" });
    // The key first: a crash between the two leaves a pair that does not match, refused at the next start.
    writePrivateFile(paths.key, pair.key);
    writePrivateFile(paths.cert, pair.cert);
    this.#pair = pair;
    this.#waiting = undefined;
    this.#log.info({ certificate: info }, "ACME certificate installed");
    for (const listener of this.#listeners) listener();
    return validityOf(cert);
  }

  #attempted(outcome: AttemptOutcome, detail: { error?: unknown; next: number; failures: number }): void {
    const next = new Date(detail.next).toISOString();
    if (outcome === "success") {
      this.#log.info({ outcome, next_renewal: next }, "ACME certificate order succeeded");
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

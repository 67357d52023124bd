import { readFileSync, watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Logger } from "../../log/log.js";
import { CertificateError, checkPair } from "./source.js";
import type { CertificateInfo, CertificatePair, CertificateSource } from "./source.js";

/** Quiet time after the last change in a watched directory before the files are read again, ms. */
export const RELOAD_DEBOUNCE_MS = 250;

/** What a reload did: a new pair is served, the files hold the pair already served, or the new files were refused. */
export type ReloadOutcome = "changed" | "unchanged" | "refused";

/** The files of a FileCertificateSource and the names its messages use for them. */
export interface CertificateFiles {
  /** Path of the PEM certificate chain (VAULT_TLS_CERT). */
  certPath: string;
  /** Path of the PEM private key (VAULT_TLS_KEY). */
  keyPath: string;
}

const NAMES = { cert: "VAULT_TLS_CERT", key: "VAULT_TLS_KEY" };

/**
 * Reads both files and checks them together (source.ts checkPair).
 * @throws CertificateError naming the file that cannot be read or what is wrong with the pair.
 */
export function readPair(files: CertificateFiles): { pair: CertificatePair; info: CertificateInfo } {
  const read = (path: string, name: string): string => {
    try {
      return readFileSync(path, "utf8");
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new CertificateError(`${name} ${path} cannot be read (${code})`);
    }
  };
  const pair = { cert: read(files.certPath, NAMES.cert), key: read(files.keyPath, NAMES.key) };
  return { pair, info: checkPair(pair, NAMES) };
}

/**
 * The certificate source of VAULT_TLS_CERT and VAULT_TLS_KEY (docs/deploy.md,
 * "The executable alone, on HTTPS"): the pair is read and checked when the source is made, and again
 * on reload() (the server calls it on SIGHUP) and when anything changes in
 * either file's directory (fs.watch, debounced by RELOAD_DEBOUNCE_MS:
 * certificate tools usually write new files beside the old and rename them
 * into place, and Kubernetes swaps a symlink, so the directory is watched,
 * not the files). A new pair that cannot be read or does not match is
 * refused with a warning (no key material in it) and the old pair is kept;
 * a pair equal to the current one changes nothing.
 */
export class FileCertificateSource implements CertificateSource {
  readonly #files: CertificateFiles;
  readonly #log: Logger;
  readonly #listeners = new Set<() => void>();
  readonly #watchers: FSWatcher[] = [];
  #pair: CertificatePair;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param files the two paths.
   * @param log where reloads and refusals are logged.
   * @param options.watch watch the directories (default true).
   * @throws CertificateError when the files cannot be read or do not make a usable pair (the start is refused).
   */
  constructor(files: CertificateFiles, log: Logger, options: { watch?: boolean } = {}) {
    this.#files = { certPath: resolve(files.certPath), keyPath: resolve(files.keyPath) };
    this.#log = log;
    const { pair, info } = readPair(this.#files);
    this.#pair = pair;
    log.info({ certificate: info }, "TLS certificate loaded");
    if (options.watch !== false) this.#watch();
  }

  /** The pair served now. */
  current(): CertificatePair {
    return this.#pair;
  }

  /** See CertificateSource.onChange. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Reads both files again now. A usable new pair becomes current() and the
   * listeners are called; an unusable one is logged (warn) and ignored.
   * @param reason what asked for it, for the log line ("SIGHUP", "file change").
   */
  reload(reason: string): ReloadOutcome {
    let next: { pair: CertificatePair; info: CertificateInfo };
    try {
      next = readPair(this.#files);
    } catch (err) {
      if (!(err instanceof CertificateError)) throw err;
      this.#log.warn({ reason, error: err.message }, "TLS certificate not reloaded: the new files were refused, the current certificate stays");
      return "refused";
    }
    if (next.pair.cert === this.#pair.cert && next.pair.key === this.#pair.key) return "unchanged";
    this.#pair = next.pair;
    this.#log.info({ reason, certificate: next.info }, "TLS certificate reloaded");
    for (const listener of this.#listeners) listener();
    return "changed";
  }

  /** Stops watching; current() keeps the last pair. */
  close(): void {
    clearTimeout(this.#timer);
    for (const w of this.#watchers) w.close();
    this.#watchers.length = 0;
  }

  #watch(): void {
    const dirs = new Set([dirname(this.#files.certPath), dirname(this.#files.keyPath)]);
    for (const dir of dirs) {
      let watcher: FSWatcher;
      try {
        // Any change in the directory may be ours (a renamed temporary file, a swapped symlink).
        watcher = watch(dir, { persistent: false }, () => this.#schedule());
      } catch (err) {
        this.#log.warn({ dir, err }, "TLS certificate directory not watched: reload with SIGHUP after replacing the files");
        continue;
      }
      watcher.on("error", (err) => this.#log.warn({ dir, err }, "TLS certificate directory no longer watched: reload with SIGHUP after replacing the files"));
      this.#watchers.push(watcher);
    }
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.reload("file change"), RELOAD_DEBOUNCE_MS);
    this.#timer.unref();
  }
}

/**
 * Redaction of the database password in every form a connection string can
 * carry it, for every log line, error message and output line that names the
 * database (docs/scaling.md, "Turning it on"). No `pg` import: config and the
 * command line use it without loading the driver.
 */

/** Parameter names (query string or key/value conninfo) whose value is a credential, matched case-insensitively. */
const CREDENTIAL_KEYS = /^(?:ssl)?password$|^pgpassword$/i;

/** `password=value` in a key/value conninfo or a query string: the value quoted ('...', with \' escapes) or up to a space or `&`. */
const CONNINFO_PASSWORD = /\b((?:ssl)?password|pgpassword)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&#]*)/gi;

/** The password of a URL's userinfo (`//user:password@`), up to the last `@`, for strings URL() refuses. */
const USERINFO_PASSWORD = /(\/\/[^/:@\s]*:).*@/;

const MASK = "***";

/**
 * `url` with every credential replaced by `***`: the userinfo password
 * (`postgres://user:pass@host`), query parameters `password`, `sslpassword`
 * and `PGPASSWORD` in any case (`?password=...`), and `password=...` in a
 * key/value conninfo string (`host=db password='s e'`), parsable or not.
 * Host, port, database, user and the other options stay, so the line still
 * says which database it means.
 * @param url a connection string as given (VAULT_DATABASE_URL, --database-url, --to).
 * @returns the redacted text; never throws.
 */
export function redactUrl(url: string): string {
  let text = url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = MASK;
    for (const key of [...parsed.searchParams.keys()]) {
      if (CREDENTIAL_KEYS.test(key)) parsed.searchParams.set(key, MASK);
    }
    text = parsed.toString();
  } catch {
    text = url.replace(USERINFO_PASSWORD, `$1${MASK}@`);
  }
  return text.replace(CONNINFO_PASSWORD, `$1$2${MASK}`);
}

/**
 * Every credential `url` carries, as written and as decoded (for
 * redactCredentials): the userinfo password, credential query parameters,
 * conninfo `password=` values (unquoted).
 */
function credentialsOf(url: string): string[] {
  const found = new Set<string>();
  const add = (value: string) => {
    if (value === "" || value === MASK) return;
    found.add(value);
    try {
      found.add(decodeURIComponent(value));
    } catch {
      // not percent-encoded text: kept as written
    }
  };
  try {
    const parsed = new URL(url);
    add(parsed.password);
    for (const [key, value] of parsed.searchParams) if (CREDENTIAL_KEYS.test(key)) add(value);
  } catch {
    const userinfo = /\/\/[^/:@\s]*:(.*)@/.exec(url);
    if (userinfo?.[1] !== undefined) add(userinfo[1]);
  }
  for (const m of url.matchAll(CONNINFO_PASSWORD)) {
    const raw = m[3] ?? "";
    add(raw);
    if (raw.startsWith("'")) {
      const inner = raw.replace(/^'|'$/g, "");
      add(inner);
      add(inner.replace(/\\(.)/g, "$1"));
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/**
 * `text` (a driver's error message, say) with every credential of `url`
 * replaced by `***` wherever it appears, and any connection string in it
 * redacted as redactUrl() does.
 * @param text the message to clean.
 * @param url the connection string whose credentials must not appear.
 */
export function redactCredentials(text: string, url: string): string {
  let out = text;
  for (const secret of credentialsOf(url)) out = out.split(secret).join(MASK);
  return out.replace(CONNINFO_PASSWORD, `$1$2${MASK}`);
}

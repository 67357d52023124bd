import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A console session is dropped after this long without a request, milliseconds (docs/console.md, "Sessions"). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** A console session ends this long after sign-in whatever its use, milliseconds. */
export const SESSION_MAX_MS = 12 * 3_600_000;
/** At most this many sessions are kept; a new one past it replaces the least recently used. */
export const SESSION_LIMIT = 1000;
/**
 * At most this many live sessions per token; a new sign-in past it ends
 * that token's oldest session, never another token's (docs/console.md,
 * "Sessions").
 */
export const SESSIONS_PER_TOKEN = 8;
/** At most this many sign-ins per token within SIGNIN_WINDOW_MS; more answer 429 (docs/console.md, "Sessions"). */
export const SIGNINS_PER_WINDOW = 30;
/** The sign-in rate's window, milliseconds. */
export const SIGNIN_WINDOW_MS = 60_000;

/** What the signed-in token may do, resolved once at sign-in from the API's own actor (docs/console.md, "Authorization"). */
export interface Caps {
  kind: "master" | "scoped" | "principal";
  /** The scoped key's or principal key's id; null for the master key. */
  keyId: string | null;
  /** Scoped key permissions (read, write, delete, admin); empty otherwise. */
  permissions: readonly string[];
  /** A scoped key's prefix, or null. */
  prefix: string | null;
  /** A principal key's org id, principal id, role and role letters. */
  orgId: string | null;
  principalId: string | null;
  role: string | null;
  letters: string;
}

/** A message shown once on the next page: `secret` is a value shown once (a new token), never stored past that page. */
export interface Flash {
  kind: "ok" | "error";
  text: string;
  secret?: string | undefined;
}

/** A signed-in console session, kept in memory only (a restart signs everyone out). */
export interface Session {
  id: string;
  /** The bearer token presented at sign-in, sent with every in-process API call; never sent to the browser. */
  token: string;
  caps: Caps;
  /** The per-session CSRF token of every form. */
  csrf: string;
  /** Unix milliseconds. */
  createdAt: number;
  lastSeen: number;
  flash?: Flash | undefined;
  /**
   * True when the token is a principal key minted at a single sign-on
   * (docs/sso.md): signing out revokes it.
   */
  minted?: boolean | undefined;
  /** The signed-in person's principal name, for a single sign-on session (the header names them). */
  person?: string | undefined;
}

/**
 * The console's sessions (docs/console.md, "Sessions"): opaque 256-bit ids,
 * 30 minutes idle and 12 hours at most, at most SESSION_LIMIT of them,
 * in memory only.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();

  /** @param now current time, Unix milliseconds (the vault's clock). */
  constructor(
    private readonly now: () => number,
    private readonly limit = SESSION_LIMIT,
    private readonly perToken = SESSIONS_PER_TOKEN,
  ) {}

  /**
   * A new session for `token`. When the token already holds `perToken`
   * live sessions, its oldest one ends; when the store is full, the least
   * recently used session ends.
   * @param minted the token was minted for this session at a single sign-on (sign-out revokes it).
   */
  create(token: string, caps: Caps, minted = false): Session {
    this.sweep();
    const own: Session[] = [];
    for (const s of this.sessions.values()) if (s.token === token) own.push(s);
    if (own.length >= this.perToken) {
      own.sort((a, b) => a.createdAt - b.createdAt);
      for (const s of own.slice(0, own.length - this.perToken + 1)) this.sessions.delete(s.id);
    }
    while (this.sessions.size >= this.limit) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const at = this.now();
    const session: Session = {
      id: randomBytes(32).toString("base64url"),
      token,
      caps,
      csrf: randomBytes(32).toString("base64url"),
      createdAt: at,
      lastSeen: at,
      minted,
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The live session of cookie value `id`, its idle time restarted; undefined (and dropped) when unknown, idle too long or too old. */
  touch(id: string | undefined): Session | undefined {
    if (id === undefined || id === "") return undefined;
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    const at = this.now();
    if (at - session.lastSeen >= SESSION_IDLE_MS || at - session.createdAt >= SESSION_MAX_MS) {
      this.sessions.delete(id);
      return undefined;
    }
    session.lastSeen = at;
    // Map order is least recently used first.
    this.sessions.delete(id);
    this.sessions.set(id, session);
    return session;
  }

  /** Ends a session (sign-out, or its token answered 401). */
  destroy(id: string): void {
    this.sessions.delete(id);
  }

  /** How many sessions are held. */
  get size(): number {
    return this.sessions.size;
  }

  /** Drops the sessions past their idle or absolute limit. */
  sweep(): void {
    const at = this.now();
    for (const [id, s] of this.sessions) {
      if (at - s.lastSeen >= SESSION_IDLE_MS || at - s.createdAt >= SESSION_MAX_MS) this.sessions.delete(id);
    }
  }
}

/**
 * The sign-in rate (docs/console.md, "Sessions"): at most `max` sign-ins
 * per token within `windowMs` milliseconds, counted by the token's SHA-256
 * (the token itself is not kept). A wrong token never gets here twice in a
 * row: the brute-force guard refuses its address first.
 */
export class SignInRate {
  private readonly hits = new Map<string, number[]>();

  /** @param now current time, Unix milliseconds. */
  constructor(
    private readonly now: () => number,
    private readonly max = SIGNINS_PER_WINDOW,
    private readonly windowMs = SIGNIN_WINDOW_MS,
  ) {}

  /**
   * Counts one sign-in of `token` when it is within the rate.
   * @returns 0 when counted, else the seconds until the next one is allowed (Retry-After).
   */
  take(token: string): number {
    const at = this.now();
    const id = createHash("sha256").update(token).digest("base64url");
    const recent = (this.hits.get(id) ?? []).filter((t) => at - t < this.windowMs);
    if (recent.length >= this.max) {
      this.hits.set(id, recent);
      return Math.max(1, Math.ceil((this.windowMs - (at - (recent[0] ?? at))) / 1000));
    }
    recent.push(at);
    this.hits.delete(id);
    this.hits.set(id, recent);
    // Bounded: past 10,000 tokens, the least recently counted are forgotten.
    while (this.hits.size > 10_000) {
      const oldest = this.hits.keys().next().value;
      if (oldest === undefined) break;
      this.hits.delete(oldest);
    }
    return 0;
  }
}

/** True when `given` is the session's CSRF token (constant-time compare). */
export function csrfMatches(session: Session, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

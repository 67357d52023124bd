import type { Awaitable } from "../model/awaitable.js";

/** A request's state (docs/requests.md, "The request"): open until its one answer. */
export type RequestState = "open" | "answered";

/**
 * One stored request (schema.sql version 20, schema-pg.sql version 10).
 * Times are Unix milliseconds; `seq` is the creation order (the list cursor).
 */
export interface RequestRecord {
  seq: number;
  /** 64 hex characters: the 256-bit capability of the answer link. */
  id: string;
  /** "global" or an org id. */
  scope: string;
  /** The scoped key or principal that asked; null for the master key. */
  ownerId: string | null;
  /** The name the answer page shows: a key's or principal's name, never a token. */
  asker: string;
  description: string;
  /** The asker's P-256 public point, base64url (87 characters). */
  publicKey: string;
  /** SHA-256 of the asker's reveal proof (32 bytes), or null. */
  revealCheck: Buffer | null;
  ttlSeconds: number;
  maxReads: number;
  state: RequestState;
  createdAt: number;
  /** The request's expiry while open; the answer's once answered. */
  expiresAt: number;
  answeredAt: number | null;
  /** The public id of the answer's secret, once answered. */
  answerId: string | null;
}

/** A request to insert, state open. */
export type NewRequest = Omit<RequestRecord, "seq" | "state" | "answeredAt" | "answerId">;

/**
 * The `requests` table (docs/requests.md), written once for both engines
 * (store/sql/requests.ts).
 */
export interface RequestStore {
  /** Inserts an open request. */
  insert(request: NewRequest): Awaitable<RequestRecord>;
  /** The request of `id`, whatever its state or expiry. */
  get(id: string): Awaitable<RequestRecord | undefined>;
  /**
   * A page of a scope's requests in creation order, past their expiry or not.
   * @param ownerId only those of this owner; undefined: every owner's.
   */
  page(query: { scope: string; ownerId: string | null | undefined; afterSeq: number; limit: number }): Awaitable<RequestRecord[]>;
  /**
   * Records the one answer of an open request not past its expiry: one
   * guarded UPDATE (`WHERE state = 'open' AND expires_at > now`), so of
   * concurrent answers, on one node or several, exactly one is recorded;
   * on PostgreSQL a second waits for the first's row lock and then finds it
   * answered.
   * @param now Unix ms; `expiresAt` the answer's expiry (Unix ms).
   * @returns the request as answered, or undefined when it was not open (or gone, or past its expiry).
   */
  answer(id: string, answerId: string, now: number, expiresAt: number): Awaitable<RequestRecord | undefined>;
  /** Deletes the request. @returns whether a row was deleted. */
  remove(id: string): Awaitable<boolean>;
  /** Up to `limit` requests whose expires_at is at or before `now` (Unix ms), oldest expiry first. */
  due(now: number, limit: number): Awaitable<RequestRecord[]>;
}

import { andThen } from "../store/work.js";
import type { Awaitable, Work } from "../store/work.js";

/**
 * Secret events: what happened to a secret, recorded in the same transaction
 * as the change (docs/architecture.md, "Where each rule lives"). The event types are
 * docs/contract.md §10's; `secret.pruned` is an audit-only action.
 */
export const SECRET_EVENT_TYPES = [
  "secret.created",
  "secret.read",
  "secret.updated",
  "secret.deleted",
  "secret.burned",
  "secret.sealed",
  "secret.expired",
] as const;
export type SecretEventType = (typeof SECRET_EVENT_TYPES)[number];

/**
 * Request events (docs/requests.md, "Events and audit"): a request made,
 * answered, or expired unanswered; delivered to webhooks and audited like
 * secret events.
 */
export const REQUEST_EVENT_TYPES = ["request.created", "request.answered", "request.expired"] as const;
export type RequestEventType = (typeof REQUEST_EVENT_TYPES)[number];

/** A request event's facts: never the description's reader, the public key or the answer's value. Times in milliseconds. */
export interface RequestEvent {
  type: RequestEventType;
  /** "global" or an org id. */
  scope: string;
  /** The request's id (64 hex). */
  id: string;
  /** The answer's read limit. */
  maxReads: number;
  /** Until when the request (or, answered, its answer) lives. */
  expiresAt: number;
  /** The answer's public id, once answered. */
  answerId: string | null;
}

/** Who caused a change, for the audit log. */
export interface Origin {
  /** "master", a scoped key id, a principal key id, or null (sweeper). */
  actor: string | null;
  /** The principal behind a principal key, else null. */
  principalId: string | null;
  /** Client ip, or null for background work. */
  ip: string | null;
  /**
   * A request's audit record: false when the request starts, set to true by
   * the audit log once a row is recorded on the request's behalf, so the
   * access record (access-guard.ts) adds a row only for a scoped-key request
   * that recorded none. Absent on background origins.
   */
  recorded?: boolean;
}

/**
 * Where a management change (an org, principal, role, principal key or
 * webhook created, changed or deleted) is recorded: the audit log's
 * recordFor (domain/audit/log.ts), through the change's own unit of work, so the
 * row commits or rolls back with the change (docs/audit.md "Management changes").
 */
export interface ChangeAudit {
  /**
   * Appends `action` on `key` to the `scope` log ("global" or an org id) on
   * behalf of `origin`. Never a token: `key` is an id or a name.
   * @throws whatever the store throws; the caller's change then rolls back.
   */
  recordFor(w: Work, origin: Origin, scope: string, action: string, key: string | null): Awaitable<void>;
}

/** The origin of background work (the TTL sweeper). */
export const SYSTEM_ORIGIN: Origin = { actor: null, principalId: null, ip: null };

/** A secret event's facts; never the value. Times in milliseconds. */
export interface SecretEvent {
  type: SecretEventType;
  /** "global" or an org id. */
  scope: string;
  /** The secret's key, or its public id when isPublic. */
  key: string;
  isPublic: boolean;
  readCount: number;
  maxReads: number | null;
  expiresAt: number | null;
  /** The secret's row id (SecretMeta.rowId): with `key`, what a receipt is keyed by. */
  rowId?: number | undefined;
}

/**
 * Receives secret events inside the unit of work of the change, and writes
 * what they cause (audit rows, webhook outbox rows) through the same work
 * handle, so in the same transaction. If it throws or rejects, the change is
 * rolled back (fail closed).
 */
export interface EventSink {
  secretEvent(w: Work, event: SecretEvent, origin: Origin): Awaitable<void>;
  /** A prune removed `count` tombstones of `scope`. */
  secretsPruned(w: Work, scope: string, count: number, origin: Origin): Awaitable<void>;
  /** A request event (docs/requests.md), in the unit of work of the change. */
  requestEvent(w: Work, event: RequestEvent, origin: Origin): Awaitable<void>;
}

/**
 * Fans one event out to several sinks, in order, each after the previous
 * one has finished; synchronous while every sink answers synchronously.
 */
export function combineSinks(...sinks: EventSink[]): EventSink {
  const fanOut = (call: (sink: EventSink) => Awaitable<void>, from: number): Awaitable<void> => {
    const sink = sinks[from];
    return sink === undefined ? undefined : andThen(call(sink), () => fanOut(call, from + 1));
  };
  return {
    secretEvent: (w, event, origin) => fanOut((sink) => sink.secretEvent(w, event, origin), 0),
    secretsPruned: (w, scope, count, origin) => fanOut((sink) => sink.secretsPruned(w, scope, count, origin), 0),
    requestEvent: (w, event, origin) => fanOut((sink) => sink.requestEvent(w, event, origin), 0),
  };
}

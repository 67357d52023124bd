/**
 * Secret events: what happened to a secret, recorded in the same transaction
 * as the change (design.md "Events are rows"). The event types are
 * decisions.md section 7's; `secret.pruned` is an audit-only action.
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
}

/**
 * Receives secret events synchronously, inside the transaction of the change,
 * and writes what they cause (audit rows, webhook outbox rows) in that same
 * transaction. If it throws, the change is rolled back (fail closed).
 */
export interface EventSink {
  secretEvent(event: SecretEvent, origin: Origin): void;
  /** A prune removed `count` tombstones of `scope`. */
  secretsPruned(scope: string, count: number, origin: Origin): void;
}

/** Fans one event out to several sinks, in order. */
export function combineSinks(...sinks: EventSink[]): EventSink {
  return {
    secretEvent(event, origin) {
      for (const sink of sinks) sink.secretEvent(event, origin);
    },
    secretsPruned(scope, count, origin) {
      for (const sink of sinks) sink.secretsPruned(scope, count, origin);
    },
  };
}

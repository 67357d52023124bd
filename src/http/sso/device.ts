import { randomBytes } from "node:crypto";
import type { DeviceAuthorizationResponse } from "openid-client";

/** At most this many device sign-ins wait at once; past it the oldest is dropped. */
export const DEVICE_LIMIT = 1000;

/** A device sign-in the vault started at the provider for a CLI (docs/sso.md, "The CLI"). */
interface WaitingDevice {
  response: DeviceAuthorizationResponse;
  /** Unix milliseconds after which it is forgotten (the provider's expires_in). */
  until: number;
}

/**
 * The device sign-ins waiting for their person, by a 256-bit id the CLI
 * polls with (the provider's device code stays in the vault), in memory
 * only: each is taken once it ends, and forgotten at its expiry.
 */
export class WaitingDevices {
  private readonly byId = new Map<string, WaitingDevice>();

  /** @param now current time, Unix milliseconds. */
  constructor(
    private readonly now: () => number,
    private readonly limit = DEVICE_LIMIT,
  ) {}

  /**
   * Keeps a started device authorization for `expiresInSeconds`.
   * @returns the id the CLI polls with (`dev_` and 43 base64url characters).
   */
  put(response: DeviceAuthorizationResponse, expiresInSeconds: number): string {
    const at = this.now();
    for (const [id, d] of this.byId) if (d.until <= at) this.byId.delete(id);
    while (this.byId.size >= this.limit) {
      const oldest = this.byId.keys().next().value;
      if (oldest === undefined) break;
      this.byId.delete(oldest);
    }
    const id = `dev_${randomBytes(32).toString("base64url")}`;
    this.byId.set(id, { response, until: at + expiresInSeconds * 1000 });
    return id;
  }

  /** The waiting authorization of `id`; undefined (and forgotten) when unknown or expired. */
  get(id: string): DeviceAuthorizationResponse | undefined {
    const found = this.byId.get(id);
    if (found === undefined) return undefined;
    if (found.until <= this.now()) {
      this.byId.delete(id);
      return undefined;
    }
    return found.response;
  }

  /** Forgets `id` (it ended: a key was minted, or it was refused). */
  delete(id: string): void {
    this.byId.delete(id);
  }
}

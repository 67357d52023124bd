import { randomBytes } from "node:crypto";

/**
 * A fresh CSP nonce for one page answer: 128 random bits, base64
 * (CSP Level 3, "nonce-source").
 */
export function newNonce(): string {
  return randomBytes(16).toString("base64");
}

/**
 * The headers of every page and page asset (docs/share.md, "What a page
 * holds to"): a strict Content-Security-Policy (nothing from another origin;
 * scripts only by this answer's nonce; styles and images from the vault's
 * own origin; fetch only to it; no framing, no <base>, forms only to it),
 * no Referer sent anywhere, never cached, never indexed, no MIME sniffing,
 * and the browser features the pages do not use turned off.
 * @param nonce the answer's script nonce (newNonce()); undefined for an answer without scripts.
 */
export function pageHeaders(nonce?: string): Record<string, string> {
  const script = nonce === undefined ? "'none'" : `'nonce-${nonce}'`;
  return {
    "Content-Security-Policy": [
      "default-src 'none'",
      `script-src ${script}`,
      "style-src 'self'",
      "img-src 'self'",
      "connect-src 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Robots-Tag": "noindex, nofollow, noarchive, nosnippet",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()",
  };
}

/**
 * Sets the pages' headers (pageHeaders) on the answer `c` is about to give.
 * @param nonce as pageHeaders.
 */
export function setPageHeaders(c: { header: (name: string, value: string) => void }, nonce?: string): void {
  for (const [name, value] of Object.entries(pageHeaders(nonce))) c.header(name, value);
}

import type { Transport } from "./http.js";
import type { Receipt } from "./types.js";

/**
 * A receipt token: `vrc_` and base64url characters (docs/share.md,
 * "Receipts"; the vault makes 54). The client takes any length from 43 to
 * 128, so that the vault alone decides its layout; base64url only, so a
 * token never leaves its route.
 */
const TOKEN = /^vrc_[A-Za-z0-9_-]{43,128}$/;

/** A receipt link: any http(s) address whose path ends in `/receipts/<token>`. */
const LINK = /^(.*)\/receipts\/(vrc_[A-Za-z0-9_-]{43,128})\/?$/;

/** A receipt taken apart: the token, and the vault's address when it came as a link. */
export interface ReceiptRef {
  /** `vrc_` + 43 base64url characters. */
  token: string;
  /** Everything before `/receipts/<token>` in a receipt link; undefined for a bare token. */
  base: string | undefined;
}

/**
 * Parses a receipt (docs/client.md, "Receipts"): the bare token
 * (`vrc_...`) or a receipt link (`<vault>/receipts/vrc_...`), whose address
 * is then the vault's.
 * @returns the parts, or undefined when `text` is neither.
 */
export function parseReceipt(text: string): ReceiptRef | undefined {
  const trimmed = text.trim();
  if (TOKEN.test(trimmed)) return { token: trimmed, base: undefined };
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const m = LINK.exec(url.origin + url.pathname);
  if (m === null || m[2] === undefined) return undefined;
  return { token: m[2], base: m[1] ?? "" };
}

/** The API's receipt body (GET /receipts/<token>), times in Unix seconds. */
interface ReceiptJson {
  state: Receipt["state"];
  created_at: number;
  expires_at: number | null;
  max_reads: number | null;
  read_count: number;
  last_read_at: number | null;
}

function receiptOf(body: ReceiptJson): Receipt {
  return {
    state: body.state,
    createdAt: body.created_at,
    expiresAt: body.expires_at,
    maxReads: body.max_reads,
    readCount: body.read_count,
    lastReadAt: body.last_read_at,
  };
}

/**
 * `GET /receipts/<token>` without a token (the receipt is the capability);
 * errors name the request `GET /receipts/<receipt>`, never the token.
 * @throws VaultApiError 404 for an unknown receipt (or one kept past its time).
 */
export async function fetchReceipt(t: Transport, token: string): Promise<Receipt> {
  const body = await t.json<ReceiptJson>({ method: "GET", path: `/receipts/${token}`, anonymous: true, label: "GET /receipts/<receipt>" });
  return receiptOf(body);
}

/**
 * `POST /receipts/<token>/destroy` without a token: deletes the receipt's secret now.
 * @returns the receipt after it (state `deleted`).
 * @throws VaultApiError 409 when the secret has ended already, 404 for an unknown receipt.
 */
export async function destroyReceipt(t: Transport, token: string): Promise<Receipt> {
  const body = await t.json<ReceiptJson>({ method: "POST", path: `/receipts/${token}/destroy`, anonymous: true, label: "POST /receipts/<receipt>/destroy" });
  return receiptOf(body);
}

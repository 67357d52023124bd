import { Transform } from "node:stream";
import type { TransformCallback } from "node:stream";

/**
 * Values shorter than this many characters are not masked: replacing every
 * `ab` in an output hides nothing and garbles the rest (docs/cli.md, "run";
 * docs/mcp.md, "What masking cannot catch"). `run` warns about them;
 * the MCP tool `run_command` refuses to run with one.
 */
export const MIN_MASKED_LENGTH = 4;

/** One byte pattern to replace, and its replacement text. */
interface Pattern {
  bytes: Buffer;
  replacement: Buffer;
}

/**
 * The forms of `value` that masking replaces (docs/mcp.md): the value as it
 * is; base64, standard and URL-safe, each with and without padding;
 * percent-encoding (encodeURIComponent, with `+` for spaces, and with `/`
 * left as is); and the inside of a JSON string (JSON.stringify without the
 * quotes, and with every non-ASCII character as `\uXXXX`). Duplicates are
 * dropped.
 * @returns the distinct forms, longest first.
 */
export function maskForms(value: string): string[] {
  const raw = Buffer.from(value, "utf8");
  const b64 = raw.toString("base64");
  const b64url = raw.toString("base64url");
  const percent = encodeURIComponent(value);
  const json = JSON.stringify(value).slice(1, -1);
  const forms = [
    value,
    b64,
    b64.replace(/=+$/, ""),
    b64url,
    `${b64url}${"=".repeat((4 - (b64url.length % 4)) % 4)}`,
    percent,
    percent.replace(/%20/g, "+"),
    percent.replace(/%2F/g, "/"),
    json,
    json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
  ];
  return [...new Set(forms)].filter((f) => f !== "").sort((a, b) => b.length - a.length);
}

/**
 * The masker of a set of injected values: name -> value. Each value of at
 * least MIN_MASKED_LENGTH characters, in every form of maskForms(), becomes
 * `<masked:NAME>` (the first name, when several names hold one value).
 */
export class Masker {
  readonly #patterns: Pattern[];
  /** The longest form, in bytes: a stream holds at most this many minus one bytes back. */
  readonly maxLength: number;
  /** The names whose values are too short to mask (never masked). */
  readonly unmasked: string[];

  /** @param values name -> value. */
  constructor(values: ReadonlyMap<string, string>) {
    const seen = new Map<string, Pattern>();
    this.unmasked = [];
    for (const [name, value] of values) {
      if (value.length < MIN_MASKED_LENGTH) {
        if (value.length > 0) this.unmasked.push(name);
        continue;
      }
      for (const form of maskForms(value)) {
        if (!seen.has(form)) seen.set(form, { bytes: Buffer.from(form, "utf8"), replacement: Buffer.from(`<masked:${name}>`, "utf8") });
      }
    }
    this.#patterns = [...seen.values()].sort((a, b) => b.bytes.length - a.bytes.length);
    this.maxLength = this.#patterns.reduce((max, p) => Math.max(max, p.bytes.length), 0);
  }

  /**
   * Replaces every pattern in `input`, earliest first (the longest form at
   * one position).
   * @param streaming whether more input may follow: then the end of `input`
   *   that could still begin (or lengthen) a form is held back, and only that.
   * @returns the masked output, and the bytes held back (never inside a replaced match).
   */
  scan(input: Buffer, streaming: boolean): { out: Buffer; rest: Buffer } {
    const parts: Buffer[] = [];
    let from = 0;
    let held: number | undefined;
    for (;;) {
      let best: { at: number; pattern: Pattern } | undefined;
      for (const pattern of this.#patterns) {
        const at = input.indexOf(pattern.bytes, from);
        if (at >= 0 && (best === undefined || at < best.at)) best = { at, pattern };
      }
      if (best === undefined) break;
      // A longer form may start here and end in the next chunk (base64 and its padding): wait for it.
      if (streaming && this.#continues(input, best.at, best.pattern.bytes.length)) {
        held = best.at;
        break;
      }
      parts.push(input.subarray(from, best.at), best.pattern.replacement);
      from = best.at + best.pattern.bytes.length;
    }
    let cut = input.length;
    if (held !== undefined) cut = held;
    else if (streaming) {
      for (let at = Math.max(from, input.length - this.maxLength + 1); at < input.length; at++) {
        if (this.#continues(input, at, 0)) {
          cut = at;
          break;
        }
      }
    }
    parts.push(input.subarray(from, cut));
    return { out: Buffer.concat(parts), rest: Buffer.from(input.subarray(cut)) };
  }

  /** True when input[at..] is the start of a form longer than both `longerThan` bytes and what is there. */
  #continues(input: Buffer, at: number, longerThan: number): boolean {
    const have = input.length - at;
    return this.#patterns.some((p) => p.bytes.length > have && p.bytes.length > longerThan && input.compare(p.bytes, 0, have, at, input.length) === 0);
  }

  /** Masks a whole text at once (no stream). */
  maskText(text: string): string {
    return this.scan(Buffer.from(text, "utf8"), false).out.toString("utf8");
  }

  /**
   * A stream that masks what passes through. It holds back only the end
   * of a chunk that could begin a form (at most maxLength - 1 bytes) until
   * the next chunk or the end, so a value split across chunks is still
   * caught and other output is not delayed.
   */
  stream(): Transform {
    let tail: Buffer = Buffer.alloc(0);
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
        const { out, rest } = this.scan(Buffer.concat([tail, chunk]), true);
        tail = rest;
        done(null, out.length > 0 ? out : undefined);
      },
      flush: (done: TransformCallback) => {
        const { out } = this.scan(tail, false);
        tail = Buffer.alloc(0);
        done(null, out.length > 0 ? out : undefined);
      },
    });
  }
}

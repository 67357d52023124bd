import { Transform } from "node:stream";
import type { TransformCallback } from "node:stream";

/**
 * Values shorter than this many characters are not masked: replacing every
 * `ab` in an output hides nothing and garbles the rest (docs/cli.md, "run";
 * docs/mcp.md, "What masking cannot catch"). `run` warns about them;
 * the MCP tool `run_command` refuses to run with one.
 */
export const MIN_MASKED_LENGTH = 4;

/**
 * The most a masking stream holds back for one run of overlapping matches
 * (a value that repeats over itself, `abab` in `ababab...`): past it, the
 * run is passed on masked before its end, so output is never held without bound.
 */
export const HOLD_LIMIT_BYTES = 64 * 1024;

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
 * quotes, and with every non-ASCII character as `\uXXXX`), also escaped
 * twice, as an API that echoes a JSON body inside a JSON answer writes it
 * (docs/mcp.md, "http_request"). Duplicates are dropped.
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
    JSON.stringify(json).slice(1, -1),
  ];
  return [...new Set(forms)].filter((f) => f !== "").sort((a, b) => b.length - a.length);
}

/**
 * The masker of a set of injected values: name -> value. Each value of at
 * least MIN_MASKED_LENGTH characters, in every form of maskForms(), becomes
 * `<masked:NAME>` (the first name, when several names hold one value);
 * overlapping matches, of one value or of several, become one `<masked:NAME>`
 * named after the longest of them.
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
   * Replaces every form in `input`: all matches of all forms of all values
   * are found first (overlapping ones included), overlapping matches are
   * merged into one run, and each run becomes the replacement of its
   * longest match, so no value can hide another by matching first
   * (docs/mcp.md, "Masking and what it cannot catch").
   * @param streaming whether more input may follow: then the end of `input`
   *   that could still begin (or lengthen) a form is held back, with any run
   *   it would extend.
   * @param covered how many leading bytes of `input` were already passed on
   *   (masked) by the previous call: they are context for matching only.
   * @returns the masked output, the bytes held back, and how many of those
   *   were already passed on (non-zero only when a run longer than
   *   HOLD_LIMIT_BYTES was passed on before its end).
   */
  scan(input: Buffer, streaming: boolean, covered = 0): { out: Buffer; rest: Buffer; covered: number } {
    const runs = this.#runs(input);
    let partial: number | undefined;
    if (streaming) {
      for (let at = Math.max(covered, input.length - this.maxLength + 1); at < input.length; at++) {
        if (this.#continues(input, at, 0)) {
          partial = at;
          break;
        }
      }
    }
    // A form that may still end in the next chunk starts at `partial` or later; a run it could overlap waits with it.
    const edge = partial ?? input.length;
    let cut = edge;
    for (const run of runs) if (run.end > edge && run.start < cut) cut = run.start;
    let context = cut;
    if (cut < covered) cut = covered;
    if (edge - cut > HOLD_LIMIT_BYTES) {
      // A very long run (a value repeated over itself): pass it on masked up to the edge and keep
      // the bytes a match across the edge could begin with, as context already passed on.
      cut = edge;
      context = Math.max(covered, edge - this.maxLength + 1);
    }
    const parts: Buffer[] = [];
    let pos = covered;
    for (const run of runs) {
      if (run.start >= cut) break;
      if (run.end <= pos) continue;
      if (run.start > pos) parts.push(input.subarray(pos, run.start));
      if (run.start >= covered) parts.push(run.pattern.replacement);
      pos = Math.min(run.end, cut);
    }
    if (pos < cut) parts.push(input.subarray(pos, cut));
    const keepFrom = Math.min(context, cut);
    return { out: Buffer.concat(parts), rest: Buffer.from(input.subarray(keepFrom)), covered: cut - keepFrom };
  }

  /** Every match of every form in `input`, overlapping matches merged into runs, in order; a run keeps its longest match's pattern. */
  #runs(input: Buffer): Array<{ start: number; end: number; pattern: Pattern }> {
    const matches: Array<{ start: number; end: number; pattern: Pattern }> = [];
    for (const pattern of this.#patterns) {
      for (let at = input.indexOf(pattern.bytes, 0); at >= 0; at = input.indexOf(pattern.bytes, at + 1)) {
        matches.push({ start: at, end: at + pattern.bytes.length, pattern });
      }
    }
    matches.sort((a, b) => a.start - b.start || b.end - a.end);
    const runs: Array<{ start: number; end: number; pattern: Pattern }> = [];
    for (const match of matches) {
      const last = runs[runs.length - 1];
      if (last !== undefined && match.start < last.end) {
        if (match.pattern.bytes.length > last.pattern.bytes.length) last.pattern = match.pattern;
        if (match.end > last.end) last.end = match.end;
      } else {
        runs.push({ start: match.start, end: match.end, pattern: match.pattern });
      }
    }
    return runs;
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
    let covered = 0;
    return new Transform({
      transform: (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) => {
        const next = this.scan(Buffer.concat([tail, chunk]), true, covered);
        tail = next.rest;
        covered = next.covered;
        done(null, next.out.length > 0 ? next.out : undefined);
      },
      flush: (done: TransformCallback) => {
        const { out } = this.scan(tail, false, covered);
        tail = Buffer.alloc(0);
        covered = 0;
        done(null, out.length > 0 ? out : undefined);
      },
    });
  }
}

import { spawn } from "node:child_process";
import { constants } from "node:os";
import type { Readable } from "node:stream";
import type { Masker } from "./mask.js";

/** The exit code when COMMAND could not be started, as a shell gives it (docs/cli.md "Exit codes and errors"). */
export const EXIT_CANNOT_START = 127;

/** The exit code of a child: its own, or 128 + the signal's number (as a shell reports it). */
function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code;
  return 128 + (signal === null ? 0 : (constants.signals[signal] ?? 0));
}

/**
 * Starts the child of `run` (docs/cli.md, "run") with stdin inherited,
 * forwards SIGINT/SIGTERM while it runs. A stream with a masker is piped
 * through it (every injected value and its encodings become
 * `<masked:NAME>`: mask.ts); one without is inherited as is.
 * @returns its exit code, 128 + signal number, or EXIT_CANNOT_START.
 */
export function runInherited(file: string, args: string[], env: NodeJS.ProcessEnv, masks: { stdout?: Masker; stderr?: Masker }): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ["inherit", masks.stdout ? "pipe" : "inherit", masks.stderr ? "pipe" : "inherit"], env });
    const piped: Promise<void>[] = [];
    if (masks.stdout && child.stdout) piped.push(pipeMasked(child.stdout, masks.stdout, process.stdout));
    if (masks.stderr && child.stderr) piped.push(pipeMasked(child.stderr, masks.stderr, process.stderr));
    const forward = (signal: NodeJS.Signals) => {
      child.kill(signal);
    };
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    const done = (code: number) => {
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      void Promise.all(piped).then(() => resolve(code));
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      process.stderr.write(`ephemeral-vault: cannot start ${file}: ${err.code ?? err.message}\n`);
      done(EXIT_CANNOT_START);
    });
    child.once("close", (code, signal) => done(exitCodeOf(code, signal)));
  });
}

/** Pipes `from` through the masker into `to` (never ending `to`); resolves once all is written. */
function pipeMasked(from: Readable, masker: Masker, to: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const masked = from.pipe(masker.stream());
    masked.on("data", (chunk: Buffer) => {
      if (!to.write(chunk)) {
        masked.pause();
        to.once("drain", () => masked.resume());
      }
    });
    masked.once("end", () => resolve());
    masked.once("error", () => resolve());
    // The reader went away (`run ... | head`): close the child's end too, so it gets SIGPIPE as it would unmasked.
    to.once("error", () => {
      from.destroy();
      masked.destroy();
      resolve();
    });
  });
}

/** Limits of a captured run (the MCP tool run_command: docs/mcp.md). */
export interface CaptureLimits {
  /** Milliseconds before the child's process group is killed (SIGKILL). */
  timeoutMs: number;
  /** Bytes kept of each stream, after masking; the rest is counted and dropped. */
  maxBytes: number;
}

/** What a captured run returns: masked, capped output and how it ended. */
export interface Captured {
  /** The exit code, 128 + N after signal N, or null when it could not start. */
  exitCode: number | null;
  /** Whether it was killed for running past the timeout. */
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Bytes dropped past maxBytes, per stream. */
  stdoutDropped: number;
  stderrDropped: number;
  /** Why it could not start (e.g. ENOENT), when it could not. */
  startError?: string;
}

/**
 * Runs a command without a shell (argv), stdin closed, in its own process
 * group, and captures its output through `masker` (mask.ts), keeping at most
 * `limits.maxBytes` of each stream; after `limits.timeoutMs` milliseconds
 * the whole group is killed with SIGKILL.
 * @returns how it ended and its masked output (docs/mcp.md, "run_command").
 */
export function runCaptured(file: string, args: string[], env: NodeJS.ProcessEnv, masker: Masker, limits: CaptureLimits): Promise<Captured> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "pipe"], env, detached: true });
    const out = collect(child.stdout, masker, limits.maxBytes);
    const err = collect(child.stderr, masker, limits.maxBytes);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, limits.timeoutMs);
    let settled = false;
    const finish = async (exitCode: number | null, startError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A grandchild may hold the pipes open: what it has written by now is all we wait for.
      const grace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 1000);
      const [o, e] = await Promise.all([out, err]);
      clearTimeout(grace);
      killGroup();
      resolve({
        exitCode,
        timedOut,
        stdout: o.text,
        stderr: e.text,
        stdoutDropped: o.dropped,
        stderrDropped: e.dropped,
        ...(startError === undefined ? {} : { startError }),
      });
    };
    child.once("error", (e: NodeJS.ErrnoException) => void finish(null, e.code ?? e.message));
    child.once("exit", (code, signal) => void finish(exitCodeOf(code, signal)));
  });
}

/** Reads a stream through the masker, keeping the first `max` bytes of masked output. */
function collect(stream: Readable, masker: Masker, max: number): Promise<{ text: string; dropped: number }> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let size = 0;
    let dropped = 0;
    const masked = masker.stream();
    const take = (chunk: Buffer) => {
      const room = max - size;
      if (room > 0) kept.push(chunk.subarray(0, room));
      size += Math.min(room > 0 ? room : 0, chunk.length);
      dropped += Math.max(0, chunk.length - Math.max(room, 0));
    };
    masked.on("data", take);
    const end = () => resolve({ text: Buffer.concat(kept).toString("utf8"), dropped });
    masked.once("end", end);
    // A destroyed source (the grace period ran out) still flushes what the masker holds.
    stream.once("close", () => {
      if (!masked.writableEnded) masked.end();
    });
    stream.pipe(masked);
  });
}

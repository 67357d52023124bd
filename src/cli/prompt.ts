import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/**
 * Asks for a line on the terminal without echoing it (a passphrase): the
 * question on stderr, the answer read from stdin, which must be a terminal.
 * The terminal is in raw mode (no echo) before the question is shown, so
 * whatever is typed once the question is on the screen is never echoed
 * (docs/cli.md, `get LINK`).
 * @returns the line typed, without its newline; undefined when stdin is not a terminal.
 */
export async function promptHidden(question: string): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  // Echo goes to a sink: what is typed is never written to the terminal.
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  // A terminal interface turns the terminal's own echo off (raw mode) as it is made: first, then the question.
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  process.stderr.write(question);
  try {
    return await new Promise<string>((resolve) => rl.question("", resolve));
  } finally {
    rl.close();
    process.stderr.write("\n");
  }
}

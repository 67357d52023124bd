import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/**
 * Asks for a line on the terminal without echoing it (a passphrase): the
 * question on stderr, the answer read from stdin, which must be a terminal.
 * @returns the line typed, without its newline; undefined when stdin is not a terminal.
 */
export async function promptHidden(question: string): Promise<string | undefined> {
  if (!process.stdin.isTTY) return undefined;
  process.stderr.write(question);
  // Echo goes to a sink: what is typed is never written to the terminal.
  const muted = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  try {
    return await new Promise<string>((resolve) => rl.question("", resolve));
  } finally {
    rl.close();
    process.stderr.write("\n");
  }
}

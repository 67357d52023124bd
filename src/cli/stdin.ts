/**
 * Reads standard input to its end, byte-exact, as UTF-8 text (no trimming:
 * a trailing newline is part of the value). When stdin is a terminal, first
 * says on stderr how to end the input.
 * @returns the text read.
 */
export async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("reading the value from stdin; end it with Ctrl-D\n");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./e2e-helpers.js";

/**
 * The examples of a docs page: each fenced block right after a line
 * `<!-- example: NAME -->`, by NAME, exactly as the page shows it.
 * @throws Error when the page has none (the marker was lost in an edit).
 */
export function docExamples(page: string): Map<string, string> {
  const text = readFileSync(join(ROOT, "docs", page), "utf8");
  const examples = new Map<string, string>();
  for (const m of text.matchAll(/<!-- example: (\S+) -->\n```[a-z]*\n([\s\S]*?)\n```/g)) {
    examples.set(m[1] as string, `${m[2] as string}\n`);
  }
  if (examples.size === 0) throw new Error(`docs/${page} has no <!-- example: NAME --> blocks`);
  return examples;
}

/**
 * An empty directory holding the examples as files, where `ephemeral-vault`
 * (and `vitest`, `@types/node`) resolve to this package as after `npm install ephemeral-vault`.
 */
export function exampleDir(examples: Map<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ev-examples-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules", "ephemeral-vault"), "dir");
  symlinkSync(join(ROOT, "node_modules", "vitest"), join(dir, "node_modules", "vitest"), "dir");
  symlinkSync(join(ROOT, "node_modules", "@types"), join(dir, "node_modules", "@types"), "dir");
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ type: "module", private: true })}\n`);
  for (const [name, body] of examples) writeFileSync(join(dir, name), body, { mode: 0o755 });
  return dir;
}

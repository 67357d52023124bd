/**
 * The documents the code cites are in the repository (docs/testing.md): a
 * comment cites docs/*.md, usually `docs/contract.md §N`, never a document
 * a clone does not have (the upstream specification files) or an issue
 * number. Every cited page and contract section exists, and a comment that
 * states a setting's default agrees with docs/configuration.md.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const SCANNED = ["src", "test", "docs", "bench", "scripts", "README.md"];
const BINARY = /\.(png|jpe?g|gif|ico|woff2?|db|tgz)$/;

/** Whitespace, possibly across a comment's line break (" *", "//", "#"). */
const S = String.raw`(?:[ \t]*\n[ \t]*(?:\*(?!/)|//|#|--)?[ \t]*|[ \t]+)`;

/** Citations a clone cannot follow: the specification files outside the repo, their section numbers, issue numbers. */
const FOREIGN: RegExp[] = [
  String.raw`\b(?:decisions|interface|design)\.md\b`,
  String.raw`\b(?:interface|decisions)${S}(?:sections?|§)${S}?\d`,
  String.raw`\b(?:issues?|PRs?|pull${S}requests?)${S}#?\d+\b`,
  String.raw`\(#\d+\)`,
].map((source) => new RegExp(source, "gi"));

/** Every text file under the scanned paths, relative to the repository root. */
function textFiles(): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    const abs = join(ROOT, path);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) {
      for (const name of readdirSync(abs)) if (name !== "node_modules") walk(join(path, name));
    } else if (!BINARY.test(path)) {
      out.push(relative(ROOT, abs));
    }
  };
  for (const path of SCANNED) walk(path);
  return out.sort();
}

const lineOf = (text: string, index: number): number => text.slice(0, index).split("\n").length;

describe("documentation citations", () => {
  const files = textFiles();
  const read = (file: string): string => readFileSync(join(ROOT, file), "utf8");

  it("scans the code, the tests and the docs", () => {
    expect(files).toContain("src/assembly/vault.ts");
    expect(files).toContain("docs/contract.md");
    expect(files.length).toBeGreaterThan(100);
  });

  it("never cites a document outside the repository or an issue number", () => {
    const found: string[] = [];
    for (const file of files) {
      const text = read(file);
      for (const re of FOREIGN) {
        for (const m of text.matchAll(re)) found.push(`${file}:${lineOf(text, m.index)}: ${m[0].replace(/\s+/g, " ")}`);
      }
    }
    expect(found).toEqual([]);
  });

  it("cites only docs pages that exist", () => {
    const missing: string[] = [];
    for (const file of files) {
      const text = read(file);
      for (const m of text.matchAll(/\bdocs\/([\w.-]+\.md)\b/g)) {
        if (!existsSync(join(ROOT, "docs", m[1] as string))) missing.push(`${file}:${lineOf(text, m.index)}: docs/${m[1]}`);
      }
      if (!file.startsWith("docs/")) continue;
      // relative links between docs pages: [text](page.md) or (page.md#anchor)
      for (const m of text.matchAll(/\]\(([\w.-]+\.md)(?:#[^)]*)?\)/g)) {
        if (!existsSync(join(ROOT, "docs", m[1] as string))) missing.push(`${file}:${lineOf(text, m.index)}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("cites only sections of docs/contract.md that exist", () => {
    const contract = read("docs/contract.md");
    const sections = new Set([...contract.matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
    expect(sections.size).toBeGreaterThan(10);
    const cite = new RegExp(String.raw`docs/contract\.md${S}(§\d+(?:(?:,${S}|${S}and${S})§\d+)*)`, "g");
    const missing: string[] = [];
    let cited = 0;
    for (const file of files) {
      const text = read(file);
      for (const m of text.matchAll(cite)) {
        for (const n of (m[1] as string).matchAll(/§(\d+)/g)) {
          cited++;
          if (!sections.has(Number(n[1]))) missing.push(`${file}:${lineOf(text, m.index)}: §${n[1]}`);
        }
      }
    }
    expect(cited).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  it("states a setting's default as docs/configuration.md does", () => {
    const defaults = new Map<string, string>();
    for (const m of read("docs/configuration.md").matchAll(/^\| `(VAULT_[A-Z_]+)`[^|]*\|[^|]*\| `([^`]+)` \|/gm)) {
      defaults.set(m[1] as string, m[2] as string);
    }
    expect(defaults.get("VAULT_AUTH_FAIL_LIMIT")).toBe("20");
    const wrong: string[] = [];
    for (const file of files.filter((f) => f.startsWith("src/"))) {
      const text = read(file);
      for (const m of text.matchAll(/\b(VAULT_[A-Z_]+)[,:]? default (\d+)/g)) {
        const documented = defaults.get(m[1] as string);
        if (documented !== undefined && documented !== m[2]) wrong.push(`${file}:${lineOf(text, m.index)}: ${m[0]} (documented: ${documented})`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

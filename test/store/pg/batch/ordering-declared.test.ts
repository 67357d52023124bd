import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// store/pg/batch/ordering.ts: which units may share a batch's transaction is decided by a
// declaration on the statement (the `ordered` tag, orderingStatement(), prepared()'s
// `ordering` option), never by reading its text at run time. This scan of src/store's sources
// proves the declarations complete: every SQL text that takes a row lock, an advisory lock or
// claims with SKIP LOCKED is declared, where it is written.

const ROOT = join(import.meta.dirname, "..", "..", "..", "..");
const STORE = join(ROOT, "src", "store");

/** SQL that orders transactions: row locks, advisory locks, SKIP LOCKED claims (the scan's, not the runtime's). */
const LOCKS = /\bpg_(try_)?advisory_(xact_)?lock(_shared)?\b|\bSKIP\s+LOCKED\b|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|\bFOR\s+(KEY\s+)?SHARE\b/i;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** The literal text of a string or template literal (a template's interpolations left out). */
function textOf(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(" ");
  return undefined;
}

const calleeName = (call: ts.CallExpression | ts.NewExpression): string | undefined =>
  ts.isIdentifier(call.expression) ? call.expression.text : undefined;

/** prepared(name, text, { ordering: true }). */
function preparedOrdering(call: ts.CallExpression): boolean {
  const options = call.arguments[2];
  return (
    options !== undefined &&
    ts.isObjectLiteralExpression(options) &&
    options.properties.some(
      (p) => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === "ordering" && p.initializer.kind === ts.SyntaxKind.TrueKeyword,
    )
  );
}

interface Finding {
  where: string;
  text: string;
  declared: boolean;
}

/** Every locking text of one file, and whether it is declared. */
function scan(path: string): Finding[] {
  const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const findings: Finding[] = [];
  const fragments = new Map<string, ts.Node>();
  const taggedUses = new Map<string, string[]>();
  const where = (node: ts.Node) => `${relative(ROOT, path)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && ts.isTemplateExpression(node.template)) {
      const tag = ts.isIdentifier(node.tag) ? node.tag.text : "";
      for (const span of node.template.templateSpans) {
        if (ts.isIdentifier(span.expression)) taggedUses.set(span.expression.text, [...(taggedUses.get(span.expression.text) ?? []), tag]);
      }
    }
    const text = textOf(node);
    if (text !== undefined && LOCKS.test(text)) {
      const parent = node.parent;
      let declared = false;
      if (ts.isTaggedTemplateExpression(parent) && parent.template === node) {
        declared = ts.isIdentifier(parent.tag) && parent.tag.text === "ordered";
      } else if (ts.isCallExpression(parent) && calleeName(parent) === "orderingStatement") {
        declared = true;
      } else if (ts.isCallExpression(parent) && calleeName(parent) === "prepared") {
        declared = preparedOrdering(parent);
      } else if (ts.isNewExpression(parent) && calleeName(parent) === "Fragment" && ts.isVariableDeclaration(parent.parent) && ts.isIdentifier(parent.parent.name)) {
        // A fragment (empty on SQLite): declared when every statement it goes into is.
        fragments.set(parent.parent.name.text, node);
        return;
      }
      findings.push({ where: where(node), text, declared });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  for (const [name, node] of fragments) {
    const tags = taggedUses.get(name) ?? [];
    findings.push({ where: where(node), text: `${name} in ${tags.length} statement(s)`, declared: tags.length > 0 && tags.every((tag) => tag === "ordered") });
  }
  return findings;
}

describe("the statements that order transactions (store/pg/batch/ordering.ts)", () => {
  const findings = sources(STORE).flatMap(scan);

  it("are all declared where they are written", () => {
    expect(findings.filter((f) => !f.declared).map((f) => `${f.where}: ${f.text.replace(/\s+/g, " ").slice(0, 80)}`)).toEqual([]);
  });

  it("are found (the scan sees the row locks, the advisory locks and the SKIP LOCKED claims)", () => {
    const texts = findings.map((f) => f.text).join("\n");
    expect(texts).toMatch(/pg_advisory_xact_lock/);
    expect(texts).toMatch(/SKIP LOCKED/);
    expect(texts).toMatch(/FOR NO KEY UPDATE/);
    expect(texts).toMatch(/FOR_UPDATE in/);
    expect(findings.length).toBeGreaterThanOrEqual(9);
  });

  it("decide nothing by their text at run time: the batch reads the declaration only", () => {
    const batch = join(STORE, "pg", "batch");
    const regexes = sources(batch).flatMap((path) => {
      const file = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
      const found: string[] = [];
      const visit = (node: ts.Node): void => {
        if (node.kind === ts.SyntaxKind.RegularExpressionLiteral && LOCKS.test(node.getText())) found.push(`${relative(ROOT, path)}: ${node.getText()}`);
        ts.forEachChild(node, visit);
      };
      visit(file);
      return found;
    });
    expect(regexes).toEqual([]);
  });
});

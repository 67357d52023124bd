#!/usr/bin/env node
// Lint (npm run lint): no object literal that starts with a spread and has more members after it
// (`{ ...a, b }`, `{ ...a, ...b }`) in the code a request runs. On Node.js 20 (V8 11.3) each such
// object gets a new map, which costs microseconds per object and keeps garbage alive into the old
// generation (docs/performance-log.md, round seven). Write `Object.assign(fresh, { b })` or a literal.
// Code that runs once (startup, the CLI, the SDK client, schema constants) may spread freely.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
/** Run once or outside the server: startup wiring, the CLI, ops commands, the SDK client, MCP over HTTP. */
const EXEMPT = [/^src\/(http\/app|config|cli|index)\.ts$/, /^src\/(assembly|cli|client|mcp|ops)\//];
/** Spreads of schema constants built once at module load (valibot and OpenAPI objects). */
const SCHEMA_SPREAD = /^(\w+Schema|\w+Fields|globalName)(\.properties)?$/;
/** `{`, a spread of a simple expression (calls with flat arguments allowed), then a comma and another member. */
const LEADING_SPREAD = /\{\s*\.\.\.([^,{}()]*(?:\([^()]*\))?[^,{}]*),\s*[^\s}]/g;

function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

const found = [];
for (const file of sources(join(root, "src"))) {
  const name = relative(root, file);
  if (EXEMPT.some((re) => re.test(name))) continue;
  // Comments blanked, lines kept, so a docstring that shows the pattern is not a finding.
  const text = readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/\/\/[^\n]*/g, "");
  for (const m of text.matchAll(LEADING_SPREAD)) {
    if (SCHEMA_SPREAD.test(m[1].trim())) continue;
    const line = text.slice(0, m.index).split("\n").length;
    found.push(`${name}:${line}: { ...${m[1].trim()}, ... }`);
  }
}
if (found.length > 0) {
  console.error(
    "object literals that start with a spread and add members (a new V8 map per object on Node.js 20;\n" +
      "use Object.assign onto a fresh object, see docs/performance-log.md round seven):",
  );
  for (const f of found) console.error(`  ${f}`);
  process.exit(1);
}

import { execFileSync } from "node:child_process";
import { existsSync, statSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * The end-to-end tests run the built server (dist/). Build it once before
 * the suite when dist/ is missing or older than src/ (and the client package's
 * dist/ when older than its src/), so `npm test` works
 * straight after a clone and after an edit.
 */
export function setup(): void {
  const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../..");
  const built = join(root, "dist", "cli.js");
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  // The client package first: the built server imports it (packages/client/dist).
  const client = join(root, "packages", "client");
  const clientBuilt = join(client, "dist", "index.js");
  if (!existsSync(clientBuilt) || statSync(clientBuilt).mtimeMs < newest(join(client, "src"))) {
    execFileSync("npx", ["tsup", "--silent"], { cwd: client, stdio: "inherit" });
  }
  const sourceTime = Math.max(newest(join(root, "src")), statSync(join(root, "schema.sql")).mtimeMs, statSync(join(root, "schema-pg.sql")).mtimeMs);
  if (!existsSync(built) || statSync(built).mtimeMs < sourceTime) {
    execFileSync("npx", ["tsup", "--silent"], { cwd: root, stdio: "inherit" });
  }
}

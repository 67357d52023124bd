import { describe, expect, it } from "vitest";
import { commandAllowed, parseCommandPattern } from "../../src/mcp/command-allow.js";

// docs/mcp.md, "Which commands": what a wildcard may and may not match.
describe("--allow-command patterns", () => {
  const allows = (pattern: string, argv: string[]) => commandAllowed(parseCommandPattern(pattern), argv);

  it("** takes further arguments, but never an option: the agent cannot add --node-options=--import=...", () => {
    expect(allows("npm run migrate **", ["npm", "run", "migrate"])).toBe(true);
    expect(allows("npm run migrate **", ["npm", "run", "migrate", "up", "20260101"])).toBe(true);
    expect(allows("npm run migrate **", ["npm", "run", "migrate", "--node-options=--import=data:text/javascript,evil"])).toBe(false);
    expect(allows("npm run migrate **", ["npm", "run", "migrate", "up", "-r", "x"])).toBe(false);
    expect(allows("npm run migrate **", ["npm", "run", "migrate", "--"])).toBe(false);
  });

  it("* in a word matches no option either, unless the operator wrote the option's start", () => {
    expect(allows("node scripts/*.js *", ["node", "scripts/seed.js", "--require=x"])).toBe(false);
    expect(allows("node scripts/*.js *", ["node", "scripts/seed.js", "prod"])).toBe(true);
    expect(allows("deploy --env=*", ["deploy", "--env=staging"])).toBe(true);
    expect(allows("deploy --env=*", ["deploy", "--other"])).toBe(false);
    expect(allows("node -e *", ["node", "-e", "console.log(1)"])).toBe(true);
    expect(allows("node -e *", ["node", "-e", "--inspect"])).toBe(false);
  });

  it("literal words still match exactly, options included", () => {
    expect(allows("npm test -- --run", ["npm", "test", "--", "--run"])).toBe(true);
    expect(allows("npm test", ["npm", "test", "--", "x"])).toBe(false);
  });
});

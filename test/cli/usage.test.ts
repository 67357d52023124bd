import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config.js";
import { BIN, runCommand } from "../support/e2e-helpers.js";

// One argument parser (commander) for every command: each command's --help
// lists every flag it takes and exits 0; a usage error exits 2 with one
// `ephemeral-vault: ...` line naming the problem (docs/cli.md).

describe("serve --help", () => {
  it("lists every setting's flag and variables, with its default from the settings table", () => {
    const help = runCommand(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const setting of Object.values(SETTINGS)) {
      const line = help.stdout.split("\n").find((l) => l.startsWith(`  --${setting.flag} `));
      expect(line, setting.flag).toBeDefined();
      for (const name of setting.env) expect(line, setting.flag).toContain(name);
      const plain = setting.shown === undefined && setting.derive === undefined;
      if (plain) expect(line, setting.flag).toMatch(new RegExp(`[(;] ?default ${String(setting.default).replace(/[.]/g, "\\.")}\\)$`));
    }
  });
});

/** Each administration command and the flags it takes (docs/cli.md, docs/operations.md). */
const ADMIN: [string[], string[]][] = [
  [["backup"], ["--data-dir", "--force", "--encryption-key"]],
  [["restore"], ["--data-dir", "--encryption-key", "--previous-encryption-keys", "--unauthenticated"]],
  [["rekey"], ["--data-dir", "--encryption-key", "--previous-encryption-keys"]],
  [["migrate"], ["--from-sqlite", "--to"]],
  [["audit", "verify"], ["--data-dir", "--database-url", "--anchor"]],
  [["audit", "head"], ["--data-dir", "--database-url"]],
  [["license", "keygen"], ["--private-key", "--force"]],
  [["license", "issue"], ["--private-key", "--subject", "--expires"]],
];

describe("the administration commands' --help", () => {
  it.each(ADMIN)("%j lists each of its flags and exits 0", (words, flags) => {
    const help = runCommand([...words, "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`ephemeral-vault ${words.join(" ")}`);
    for (const flag of flags) expect(help.stdout, flag).toContain(flag);
  });
});

describe("usage errors exit 2 with a clear line", () => {
  it.each([
    [["backup"], /FILE/],
    [["backup", "a.db", "--no-such-flag"], /--no-such-flag/],
    [["restore", "a.db", "b.db"], /too many arguments|FILE/],
    [["rekey", "--data-dir"], /--data-dir/],
    [["migrate", "--to", "postgres://x@y/z"], /--from-sqlite/],
    [["audit", "verify", "--bogus"], /--bogus/],
    [["license", "issue", "--private-key"], /--private-key/],
    [["serve", "--port"], /--port/],
    [["serve", "stray"], /stray|too many arguments/],
    [["--no-such-flag"], /--no-such-flag/],
  ])("%j", (args, message) => {
    const result = runCommand(args, { VAULT_DATA_DIR: "/nonexistent/ev-usage" });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^ephemeral-vault: /);
    expect(result.stderr).toMatch(message);
  });
});

describe("a closed stdout", () => {
  it("ends a command quietly: `ephemeral-vault put --help | true` prints no EPIPE stack and exits 0", () => {
    for (const words of ["put --help", "get --help", "--help", "run --help"]) {
      const piped = spawnSync("bash", ["-c", `set -o pipefail; "${process.execPath}" "${BIN}" ${words} | true`], { encoding: "utf8", timeout: 20_000 });
      expect(piped.stderr, words).toBe("");
      expect(piped.status, words).toBe(0);
    }
  });
});

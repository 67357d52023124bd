import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../../src/config.js";
import { settingsDocTable, withSettingsDocTable } from "../../src/config/render.js";

// The settings table (src/config/settings.ts) is the only home of a setting's
// variable, flag, default and values: docs/configuration.md's table is
// generated from it (npm run gen:config-docs), and must say the same.

const PAGE = join(import.meta.dirname, "../..", "docs", "configuration.md");

describe("docs/configuration.md's settings table", () => {
  it("is the one the settings table renders (run npm run gen:config-docs after changing a setting)", () => {
    const page = readFileSync(PAGE, "utf8");
    expect(page).toBe(withSettingsDocTable(page));
  });

  it("has one row per setting, naming its variables, flag and default", () => {
    const table = settingsDocTable();
    const rows = table.split("\n").slice(2);
    expect(rows).toHaveLength(Object.keys(SETTINGS).length);
    for (const setting of Object.values(SETTINGS)) {
      const line = rows.find((r) => r.startsWith(`| \`${setting.env[0]}\``));
      expect(line, setting.env[0]).toBeDefined();
      expect(line).toContain(`\`--${setting.flag}\``);
      for (const alias of setting.env.slice(1)) expect(line).toContain(`\`${alias}\``);
      const shown = setting.shown ?? `\`${String(setting.default)}\``;
      expect(line?.split(" | ")[2], setting.env[0]).toBe(shown);
    }
  });

  it("gives VAULT_AUTH_FAIL_LIMIT's real default, 20 (0 turns the guard off)", () => {
    const line = settingsDocTable()
      .split("\n")
      .find((r) => r.startsWith("| `VAULT_AUTH_FAIL_LIMIT`"));
    expect(line?.split(" | ")[2]).toBe("`20`");
  });
});

import { describe, expect, it } from "vitest";
import { CONSOLE_EN, consoleStringsFor } from "../../../../src/http/pages/console-strings.js";
import { localePicker, STRINGS_EN, stringsFor } from "../../../../src/http/pages/strings.js";

// How the share pages and the console choose their string table from Accept-Language
// (docs/share.md, "Locales"; docs/console.md): one picker serves both.

describe("locale tables", () => {
  it("picks the first listed language that has a table, by its primary subtag in any case, else the fallback", () => {
    const pick = localePicker({ en: "english", fr: "french" }, "fallback");
    expect(pick("FR-ca, en;q=0.5")).toBe("french");
    expect(pick("de-CH, en;q=0.5, fr")).toBe("english");
    expect(pick("de, it")).toBe("fallback");
    expect(pick("")).toBe("fallback");
    expect(pick(undefined)).toBe("fallback");
    expect(pick(" ;q=1, , fr;q=0.1")).toBe("french");
  });

  it("the share pages and the console answer English for a language without a table", () => {
    expect(stringsFor("de-DE,de;q=0.9")).toBe(STRINGS_EN);
    expect(consoleStringsFor("de-DE,de;q=0.9")).toBe(CONSOLE_EN);
    expect(consoleStringsFor("en-GB")).toBe(CONSOLE_EN);
  });
});

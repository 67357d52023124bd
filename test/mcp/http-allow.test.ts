import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { httpAllowed, keyAllowed, parseHostRule, privateAllowed, ruleMatches, rulesFor } from "../../src/mcp/http-allow.js";
import { referencedKeys, substitute, substituteJson } from "../../src/mcp/http-refs.js";

// docs/mcp.md, "http_request": which URLs an --allow-host entry covers, which keys may go there.
describe("--allow-host patterns", () => {
  const covers = (pattern: string, url: string) => ruleMatches(parseHostRule(pattern), new URL(url));

  it("an exact host covers that host on any port unless it names one; a wildcard covers names under it, not the domain itself", () => {
    expect(covers("api.example.com", "https://api.example.com/x")).toBe(true);
    expect(covers("api.example.com", "https://API.Example.com:443/x")).toBe(true);
    expect(covers("api.example.com", "https://api.example.com:8443/x")).toBe(true);
    expect(covers("api.example.com:443", "https://api.example.com:8443/x")).toBe(false);
    expect(covers("api.example.com", "https://x.api.example.com/")).toBe(false);
    expect(covers("api.example.com", "https://api.example.com.evil.test/")).toBe(false);
    expect(covers("api.example.com", "http://api.example.com/")).toBe(true); // the scheme is checked apart (--allow-http)
    expect(covers("*.example.com", "https://a.example.com/")).toBe(true);
    expect(covers("*.example.com", "https://a.b.example.com/")).toBe(true);
    expect(covers("*.example.com", "https://example.com/")).toBe(false);
    expect(covers("*.example.com", "https://badexample.com/")).toBe(false);
    expect(covers("127.0.0.1:8443", "https://127.0.0.1:8443/")).toBe(true);
    expect(covers("127.0.0.1:8443", "https://2130706433:8443/")).toBe(true); // the URL parser's odd IPv4 spellings
    expect(covers("127.0.0.1:8443", "https://127.0.0.1/")).toBe(false);
    expect(covers("[::1]:8443", "https://[0:0::1]:8443/")).toBe(true);
  });

  it("a path prefix covers whole segments; dot segments are resolved and an encoded slash is refused under it", () => {
    expect(covers("api.example.com/v1/", "https://api.example.com/v1/charges")).toBe(true);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1")).toBe(false);
    expect(covers("api.example.com/v1", "https://api.example.com/v1")).toBe(true);
    expect(covers("api.example.com/v1", "https://api.example.com/v1/x")).toBe(true);
    expect(covers("api.example.com/v1", "https://api.example.com/v10")).toBe(false);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1/../admin")).toBe(false);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1/%2e%2e/admin")).toBe(false);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1/..%2Fadmin")).toBe(false);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1/..%5cadmin")).toBe(false);
    expect(covers("api.example.com/v1/", "https://api.example.com/v1\\..\\admin")).toBe(false);
  });

  it("=PREFIX binds keys to the host, and the host to its keys; without it any key no entry binds may go (the weaker form)", () => {
    const rules = ["api.example.com=prod/example/", "*.docs.example.com=public/", "open.example.com", "*.example.com"].map(parseHostRule);
    const allowed = (url: string, key: string) => keyAllowed(rules, rulesFor(rules, new URL(url)), key);
    expect(allowed("https://api.example.com/", "prod/example/api_token")).toBe(true);
    const alone = [parseHostRule("api.example.com=prod/example/")];
    expect(keyAllowed(alone, alone, "prod/example/x")).toBe(true);
    expect(keyAllowed(alone, alone, "prod/example")).toBe(false); // a plain string comparison: the "/" is part of PREFIX
    expect(keyAllowed(alone, alone, "prod/other/token")).toBe(false);
    expect(allowed("https://attacker.docs.example.com/", "prod/example/api_token")).toBe(false);
    expect(allowed("https://attacker.docs.example.com/", "public/x")).toBe(true);
    // Unbound entries take any key that no entry binds, never a bound one.
    expect(allowed("https://open.example.com/", "prod/other/token")).toBe(true);
    expect(allowed("https://open.example.com/", "prod/example/api_token")).toBe(false);
    expect(allowed("https://attacker.example.com/", "prod/example/api_token")).toBe(false);
    expect(allowed("https://attacker.example.com/", "public/x")).toBe(false);
    // api.example.com is also under the unbound *.example.com: it takes its own keys and unbound ones.
    expect(allowed("https://api.example.com/", "prod/other/token")).toBe(true);
    expect(keyAllowed(rules, [], "anything")).toBe(false);
  });

  it("the address guard is lifted only by an exact entry naming a private address or localhost", () => {
    const lifted = (pattern: string, url: string) => privateAllowed([parseHostRule(pattern)], new URL(url));
    expect(lifted("127.0.0.1:8443", "https://127.0.0.1:8443/")).toBe(true);
    expect(lifted("localhost:3000", "https://localhost:3000/")).toBe(true);
    expect(lifted("[::1]", "https://[::1]/")).toBe(true);
    expect(lifted("*.localhost", "https://api.localhost/")).toBe(false);
    expect(lifted("internal.corp", "https://internal.corp/")).toBe(false);
    expect(lifted("93.184.215.14", "https://93.184.215.14/")).toBe(false);
  });

  it("--allow-http names a host, or a host and port", () => {
    expect(httpAllowed(new Set(["127.0.0.1"]), new URL("http://127.0.0.1:8080/"))).toBe(true);
    expect(httpAllowed(new Set(["127.0.0.1:8080"]), new URL("http://127.0.0.1:8080/"))).toBe(true);
    expect(httpAllowed(new Set(["127.0.0.1:8080"]), new URL("http://127.0.0.1:9090/"))).toBe(false);
  });

  it("refuses a scheme, a user name, a query, a misplaced wildcard, a wildcard address and an empty =PREFIX", () => {
    for (const bad of ["https://api.example.com", "user@api.example.com", "api.example.com/?x=1", "api.*.com", "*", "*.127.0.0.1", "api.example.com=", "", "a b"]) {
      expect(() => parseHostRule(bad), bad).toThrow(ConfigError);
    }
  });
});

describe("{{vault:KEY}} references", () => {
  it("are found inside longer text, each key once; a malformed one is refused", () => {
    expect(referencedKeys("Bearer {{vault:prod/a}} and {{vault:prod/a|base64}} {{vault:b}}")).toEqual(["prod/a", "b"]);
    expect(referencedKeys("no reference {{ at all }}")).toEqual([]);
    for (const bad of ["{{vault:}}", "{{vault:k|hex}}", "{{vault:k", "{{vault:a b}}", "{{vault:{{vault:k}}}}"]) {
      expect(() => referencedKeys(bad), bad).toThrow(ConfigError);
    }
  });

  it("are replaced by the value, or its base64; in a JSON body the value stays one string", () => {
    const values = new Map([["k", 'a"b\\c']]);
    expect(substitute("x {{vault:k}} {{vault:k|base64}}", values)).toBe(`x a"b\\c ${Buffer.from('a"b\\c').toString("base64")}`);
    const body = substituteJson({ t: "{{vault:k}}", list: ["{{vault:k}}", 1, null] }, values);
    expect(JSON.parse(JSON.stringify(body))).toEqual({ t: 'a"b\\c', list: ['a"b\\c', 1, null] });
  });
});

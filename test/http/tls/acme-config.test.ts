import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.js";
import { placeholderPair, storedPairProblem, writePrivateFile, readIfPresent } from "../../../src/http/tls/acme-files.js";
import { checkPair } from "../../../src/http/tls/source.js";
import { makeCa, makeLeaf } from "../../support/tls-helpers.js";

// The ACME settings and files (docs/deploy.md "Certificates by ACME", docs/configuration.md).

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe("the ACME settings", () => {
  const base = { VAULT_ACME_DOMAINS: "Vault.Example.com, vault.example.com,api.example.com", VAULT_HTTP_REDIRECT_PORT: "80", VAULT_PORT: "443" };

  it("parse the domains (lower-cased, duplicates dropped) and default to Let's Encrypt's production directory", () => {
    const config = loadConfig({}, base);
    expect(config.acmeDomains).toEqual(["vault.example.com", "api.example.com"]);
    expect(config.acmeDirectory).toBe("https://acme-v02.api.letsencrypt.org/directory");
    expect(config.acmeEmail).toBeUndefined();
    // TLS is on: the default public URL is https, named by the first domain (the certificate's name), no :443.
    expect(config.publicUrl).toBe("https://vault.example.com");
    expect(loadConfig({}, { ...base, VAULT_PORT: "8443" }).publicUrl).toBe("https://vault.example.com:8443");
    expect(loadConfig({}, { ...base, VAULT_PUBLIC_URL: "https://secrets.example.com" }).publicUrl).toBe("https://secrets.example.com");
    expect(loadConfig({}, { ...base, VAULT_ACME_EMAIL: "ops@example.com" }).acmeEmail).toBe("ops@example.com");
  });

  it("refuse what cannot work, naming the setting", () => {
    expect(() => loadConfig({}, { VAULT_ACME_DOMAINS: "vault.example.com" })).toThrow(/VAULT_ACME_DOMAINS needs VAULT_HTTP_REDIRECT_PORT/);
    expect(() => loadConfig({}, { ...base, VAULT_TLS_CERT: "/c.pem", VAULT_TLS_KEY: "/k.pem" })).toThrow(/VAULT_ACME_DOMAINS and VAULT_TLS_CERT exclude each other/);
    expect(() => loadConfig({}, { ...base, VAULT_DATA_DIR: ":memory:" })).toThrow(/VAULT_ACME_DOMAINS needs a data dir on disk/);
    for (const bad of ["*.example.com", "10.0.0.1", "a_b.example.com", " , "]) {
      expect(() => loadConfig({}, { ...base, VAULT_ACME_DOMAINS: bad })).toThrow(/^VAULT_ACME_DOMAINS/);
    }
    expect(() => loadConfig({}, { ...base, VAULT_ACME_EMAIL: "not an address" })).toThrow(/VAULT_ACME_EMAIL must be an email address/);
    expect(() => loadConfig({}, { ...base, VAULT_ACME_DIRECTORY: "acme.example.com" })).toThrow(/VAULT_ACME_DIRECTORY/);
  });
});

describe("the ACME files", () => {
  it("are written atomically with mode 0600 in a 0700 directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "ev-acme-files-"));
    dirs.push(dir);
    const path = join(dir, "acme", "key.pem");
    writePrivateFile(path, "one");
    writePrivateFile(path, "two");
    expect(readIfPresent(path)).toBe("two");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "acme")).mode & 0o777).toBe(0o700);
    expect(readIfPresent(join(dir, "acme", "cert.pem"))).toBeUndefined();
  });

  it("serve a stored pair only when it matches, names every domain and has not expired", async () => {
    const ca = await makeCa();
    const [leaf, other] = [await makeLeaf(ca), await makeLeaf(ca)];
    const now = Date.now();
    expect(storedPairProblem(leaf, ["localhost"], now)).toBeUndefined();
    expect(storedPairProblem({ cert: leaf.cert, key: other.key }, ["localhost"], now)).toMatch(/is not the private key/);
    expect(storedPairProblem(leaf, ["localhost", "vault.example.com"], now)).toBe("the stored certificate does not name vault.example.com");
    expect(storedPairProblem(leaf, ["localhost"], now + 20 * 365 * 86_400_000)).toBe("the stored certificate has expired");
  });

  it("make a self-signed placeholder named after the domains that Node's TLS accepts", async () => {
    const pair = await placeholderPair(["vault.example.com", "api.example.com"]);
    const info = checkPair(pair, { cert: "cert", key: "key" });
    expect(info.altNames).toBe("DNS:vault.example.com, DNS:api.example.com");
    expect(info.subject).toContain("waiting for its ACME certificate");
  });
});

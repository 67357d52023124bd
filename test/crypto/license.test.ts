import { createPublicKey, generateKeyPairSync, sign } from "node:crypto";
import { chmodSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  FREE_TIER_LIMIT,
  generateLicenseKeyPair,
  issueLicense,
  parseLicensePublicKey,
  verifyLicense,
} from "../../src/crypto/license.js";
import { buildTestVault } from "../support/helpers.js";
import type { TestVault } from "../support/helpers.js";
import { cleanupTemp, killChildren, runCommand, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

const NOW = Date.UTC(2026, 0, 1);
const NOW_S = NOW / 1000;

/** Signs an arbitrary payload text the way issueLicense does, to make odd but correctly signed tokens. */
function signRawToken(privateKeyPem: string, payloadText: string): string {
  const body = Buffer.from(payloadText, "utf8").toString("base64url");
  return `${body}.${sign(null, Buffer.from(body, "ascii"), privateKeyPem).toString("base64url")}`;
}

describe("license tokens (docs/contract.md §12)", () => {
  const pair = generateLicenseKeyPair();
  const publicKey = parseLicensePublicKey(pair.publicKeyBase64);

  it("generates a PEM private key and a base64 32-byte public key", () => {
    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(Buffer.from(pair.publicKeyBase64, "base64")).toHaveLength(32);
    expect(publicKey?.asymmetricKeyType).toBe("ed25519");
  });

  it("issues a token base64url(payload).base64url(signature) with {sub, iat, exp}", () => {
    const token = issueLicense(pair.privateKeyPem, "Acme Corp", NOW_S + 3600, NOW);
    const parts = token.split(".");
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(parts[0] as string, "base64url").toString("utf8"))).toEqual({
      sub: "Acme Corp",
      iat: NOW_S,
      exp: NOW_S + 3600,
    });
    expect(Buffer.from(parts[1] as string, "base64url")).toHaveLength(64);
  });

  it("verifies a valid license, with an expiry and without one", () => {
    expect(verifyLicense(issueLicense(pair.privateKeyPem, "acme", NOW_S + 60, NOW), publicKey, NOW)).toEqual({
      valid: true,
      subject: "acme",
      expiresAt: NOW_S + 60,
    });
    expect(verifyLicense(issueLicense(pair.privateKeyPem, "forever", null, NOW), publicKey, NOW)).toEqual({
      valid: true,
      subject: "forever",
      expiresAt: null,
    });
  });

  it("refuses an expired license (exp at or before now)", () => {
    const token = issueLicense(pair.privateKeyPem, "acme", NOW_S, NOW - 10_000);
    expect(verifyLicense(token, publicKey, NOW)).toEqual({ valid: false, reason: expect.stringMatching(/expired/) });
    expect(verifyLicense(token, publicKey, NOW - 1).valid).toBe(true);
  });

  it("refuses a bad signature: payload or signature altered", () => {
    const token = issueLicense(pair.privateKeyPem, "acme", null, NOW);
    const [body, signature] = token.split(".") as [string, string];
    const otherBody = Buffer.from(JSON.stringify({ sub: "evil", iat: NOW_S, exp: null })).toString("base64url");
    expect(verifyLicense(`${otherBody}.${signature}`, publicKey, NOW)).toMatchObject({ valid: false, reason: expect.stringMatching(/signature/) });
    const flipped = Buffer.from(signature, "base64url");
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(verifyLicense(`${body}.${flipped.toString("base64url")}`, publicKey, NOW).valid).toBe(false);
  });

  it("refuses a license signed by another key", () => {
    const other = generateLicenseKeyPair();
    const token = issueLicense(other.privateKeyPem, "acme", null, NOW);
    expect(verifyLicense(token, publicKey, NOW)).toMatchObject({ valid: false, reason: expect.stringMatching(/signature/) });
    expect(verifyLicense(token, parseLicensePublicKey(other.publicKeyBase64), NOW).valid).toBe(true);
  });

  it("refuses malformed tokens", () => {
    for (const token of ["", "abc", "a.b.c", ".", "a.", ".b", "not base64!.sig", "   "]) {
      expect(verifyLicense(token, publicKey, NOW).valid, JSON.stringify(token)).toBe(false);
    }
    expect(verifyLicense(undefined, publicKey, NOW)).toEqual({ valid: false, reason: expect.stringMatching(/VAULT_LICENSE_KEY/) });
  });

  it("refuses a correctly signed payload that is not JSON or lacks its fields", () => {
    expect(verifyLicense(signRawToken(pair.privateKeyPem, "not json"), publicKey, NOW)).toMatchObject({ valid: false });
    expect(verifyLicense(signRawToken(pair.privateKeyPem, JSON.stringify({ iat: NOW_S, exp: null })), publicKey, NOW).valid).toBe(false);
    expect(verifyLicense(signRawToken(pair.privateKeyPem, JSON.stringify({ sub: "x", iat: NOW_S })), publicKey, NOW).valid).toBe(false);
    expect(verifyLicense(signRawToken(pair.privateKeyPem, JSON.stringify({ sub: "x", iat: NOW_S, exp: "never" })), publicKey, NOW).valid).toBe(false);
    expect(verifyLicense(signRawToken(pair.privateKeyPem, JSON.stringify({ sub: "x", iat: NOW_S, exp: 1.5e12 + 0.5 })), publicKey, NOW).valid).toBe(false);
    expect(verifyLicense(signRawToken(pair.privateKeyPem, JSON.stringify({ sub: "x", iat: NOW_S, exp: null })), publicKey, NOW).valid).toBe(true);
  });

  it("cannot be checked without a public key", () => {
    const token = issueLicense(pair.privateKeyPem, "acme", null, NOW);
    expect(verifyLicense(token, undefined, NOW)).toMatchObject({ valid: false, reason: expect.stringMatching(/VAULT_LICENSE_PUBLIC_KEY/) });
  });

  it("accepts the public key as PEM (SPKI) and as base64url too", () => {
    const pem = createPublicKey(pair.privateKeyPem).export({ type: "spki", format: "pem" }).toString();
    const fromPem = parseLicensePublicKey(pem);
    expect(fromPem?.asymmetricKeyType).toBe("ed25519");
    const token = issueLicense(pair.privateKeyPem, "acme", null, NOW);
    expect(verifyLicense(token, fromPem, NOW).valid).toBe(true);
    const b64url = Buffer.from(pair.publicKeyBase64, "base64").toString("base64url");
    expect(verifyLicense(token, parseLicensePublicKey(b64url), NOW).valid).toBe(true);
  });

  it("refuses public keys that are not Ed25519 or not 32 bytes", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" }).toString();
    for (const text of [rsa, "", "garbage", Buffer.alloc(31).toString("base64"), Buffer.alloc(33).toString("base64")]) {
      expect(parseLicensePublicKey(text), text.slice(0, 30)).toBeUndefined();
    }
  });

  it("refuses to issue with a key that is not Ed25519", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(() => issueLicense(rsa, "acme", null, NOW)).toThrow(/Ed25519/);
  });
});

describe("the free tier in a vault (docs/contract.md §12)", () => {
  async function fill(v: TestVault, n: number, prefix = "s"): Promise<void> {
    for (let i = 0; i < n; i++) {
      const res = await v.asMaster("POST", "/secrets", { key: `${prefix}${i}`, value: "v" });
      expect(res.status).toBe(201);
    }
  }

  it(`refuses the ${FREE_TIER_LIMIT + 1}st active secret with 402 {error, message}`, async () => {
    const v = buildTestVault({ activeLimit: () => FREE_TIER_LIMIT });
    await fill(v, FREE_TIER_LIMIT);
    for (const body of [{ key: "one-more", value: "v" }, { value: "public" }]) {
      const res = await v.asMaster("POST", "/secrets", body);
      expect(res.status).toBe(402);
      const json = (await res.json()) as Record<string, unknown>;
      expect(json.error).toBe("free tier limit reached");
      expect(json.message).toMatch(/100 active secrets/);
      expect(json.message).toMatch(/VAULT_LICENSE_KEY/);
    }
    expect(await v.tx.run((w) => v.secrets.countActive(w))).toBe(FREE_TIER_LIMIT);
  });

  it("frees a slot for each expired, burned or deleted secret", async () => {
    const v = buildTestVault({ activeLimit: () => FREE_TIER_LIMIT });
    await v.asMaster("POST", "/secrets", { key: "expires", value: "v", ttl_seconds: 10 });
    await v.asMaster("POST", "/secrets", { key: "burns", value: "v", max_reads: 1 });
    await v.asMaster("POST", "/secrets", { key: "deleted", value: "v" });
    await fill(v, FREE_TIER_LIMIT - 3);
    expect((await v.asMaster("POST", "/secrets", { value: "v" })).status).toBe(402);

    v.clock.advance(10_000); // expired, not swept: the slot is free already
    expect((await v.asMaster("POST", "/secrets", { key: "a", value: "v" })).status).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { value: "v" })).status).toBe(402);

    expect((await v.asMaster("GET", "/secrets/burns")).status).toBe(200);
    expect((await v.asMaster("POST", "/secrets", { key: "b", value: "v" })).status).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { value: "v" })).status).toBe(402);

    expect((await v.asMaster("DELETE", "/secrets/deleted")).status).toBe(200);
    expect((await v.asMaster("POST", "/secrets", { key: "c", value: "v" })).status).toBe(201);
    expect((await v.asMaster("POST", "/secrets", { value: "v" })).status).toBe(402);
  });

  it("still allows reads, PATCH, DELETE and prune at the limit", async () => {
    const v = buildTestVault({ activeLimit: () => 2 });
    await v.asMaster("POST", "/secrets", { key: "a", value: "v" });
    await v.asMaster("POST", "/secrets", { key: "b", value: "v" });
    expect((await v.asMaster("GET", "/secrets/a")).status).toBe(200);
    expect((await v.asMaster("PATCH", "/secrets/a", { ttl_seconds: 5 })).status).toBe(200);
    expect((await v.asMaster("GET", "/secrets")).status).toBe(200);
    expect((await v.asMaster("POST", "/prune")).status).toBe(200);
    expect((await v.asMaster("DELETE", "/secrets/b")).status).toBe(200);
  });

  it(`has no limit with a valid license: the ${FREE_TIER_LIMIT + 1}st secret is created`, async () => {
    const v = buildTestVault({ activeLimit: () => null });
    await fill(v, FREE_TIER_LIMIT + 1);
    expect(await v.tx.run((w) => v.secrets.countActive(w))).toBe(FREE_TIER_LIMIT + 1);
  });
});

describe("license, end to end through the command", () => {
  afterEach(killChildren);
  afterAll(cleanupTemp);

  async function createMany(vault: VaultProcess, n: number): Promise<number[]> {
    const statuses: number[] = [];
    // in waves, to keep the number of sockets modest
    for (let i = 0; i < n; i += 25) {
      const wave = await Promise.all(
        Array.from({ length: Math.min(25, n - i) }, async (_, j) => {
          const res = await vault.request("POST", "/secrets", { key: `k${i + j}`, value: "v" });
          await res.arrayBuffer();
          return res.status;
        }),
      );
      statuses.push(...wave);
    }
    return statuses;
  }

  it("license keygen + license issue make a license that lifts the limit of a real server", async () => {
    const dir = tempDir();
    const keyFile = join(dir, "issuer.pem");
    const keygen = runCommand(["license", "keygen", "--private-key", keyFile]);
    expect(keygen.code).toBe(0);
    const publicKey = /^VAULT_LICENSE_PUBLIC_KEY=(\S+)$/m.exec(keygen.stdout)?.[1];
    expect(publicKey).toBeDefined();
    expect(readFileSync(keyFile, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(keygen.stdout).not.toContain("PRIVATE KEY");

    const issue = runCommand(["license", "issue", "--private-key", keyFile, "--subject", "e2e tests"]);
    expect(issue.code).toBe(0);
    const license = issue.stdout.trim();
    expect(license).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(JSON.parse(Buffer.from(license.split(".")[0] as string, "base64url").toString())).toMatchObject({
      sub: "e2e tests",
      exp: null,
    });

    const vault = await startVault(join(dir, "data"), {
      env: { VAULT_LICENSE_KEY: license, VAULT_LICENSE_PUBLIC_KEY: publicKey, VAULT_LOG_LEVEL: "info" },
    });
    const statuses = await createMany(vault, FREE_TIER_LIMIT + 1);
    expect(statuses.filter((s) => s === 201)).toHaveLength(FREE_TIER_LIMIT + 1);
    expect(vault.stdout()).toMatch(/license valid/);
    expect(vault.stdout()).not.toContain(license);
  });

  it("without a license (or with an expired one) a real server refuses the 101st secret with 402 and warns once", async () => {
    const dir = tempDir();
    const keyFile = join(dir, "issuer.pem");
    const keygen = runCommand(["license", "keygen", "--private-key", keyFile]);
    const publicKey = /^VAULT_LICENSE_PUBLIC_KEY=(\S+)$/m.exec(keygen.stdout)?.[1];
    // `license issue` refuses a past --expires: an expired license is made with the library.
    const expired = issueLicense(readFileSync(keyFile, "utf8"), "old", 1_000_000_000, Date.now());

    const vault = await startVault(join(dir, "data"), {
      env: { VAULT_LICENSE_KEY: expired, VAULT_LICENSE_PUBLIC_KEY: publicKey },
    });
    const statuses = await createMany(vault, FREE_TIER_LIMIT);
    expect(statuses.every((s) => s === 201)).toBe(true);
    const res = await vault.request("POST", "/secrets", { value: "one too many" });
    expect(res.status).toBe(402);
    expect(await res.json()).toEqual({ error: "free tier limit reached", message: expect.any(String) });
    const warnings = vault.stdout().split("\n").filter((l) => l.includes("free tier"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/expired/);
  });

  it("license keygen without --private-key prints the pair (docs/contract.md §12), usable by license issue", () => {
    const dir = tempDir();
    const keygen = runCommand(["license", "keygen"]);
    expect(keygen.code).toBe(0);
    const publicKey = /^VAULT_LICENSE_PUBLIC_KEY=(\S+)$/m.exec(keygen.stdout)?.[1];
    const privatePem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(keygen.stdout)?.[0];
    expect(publicKey).toBeDefined();
    expect(privatePem).toBeDefined();
    const keyFile = join(dir, "issuer.pem");
    writeFileSync(keyFile, `${privatePem}\n`, { mode: 0o600 });
    const issue = runCommand(["license", "issue", "--private-key", keyFile, "--subject", "printed pair"]);
    expect(issue.code).toBe(0);
    const status = verifyLicense(issue.stdout.trim(), parseLicensePublicKey(publicKey as string), Date.now());
    expect(status).toMatchObject({ valid: true, subject: "printed pair" });
  });

  it("refuses bad license command lines with exit code 2", () => {
    const dir = tempDir();
    const keyFile = join(dir, "issuer.pem");
    expect(runCommand(["license"]).code).toBe(2);
    expect(runCommand(["license", "keygen", "--private-key", keyFile]).code).toBe(0);
    const again = runCommand(["license", "keygen", "--private-key", keyFile]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/--force/);
    chmodSync(keyFile, 0o644);
    expect(runCommand(["license", "keygen", "--private-key", keyFile, "--force"]).code).toBe(0);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600); // --force does not keep a looser mode
    expect(runCommand(["license", "issue", "--private-key", keyFile]).code).toBe(2);
    expect(runCommand(["license", "issue", "--private-key", keyFile, "--subject", "x", "--expires", "soon"]).code).toBe(2);
    // An --expires that is not in the future would issue a license that is expired already.
    const now = Math.floor(Date.now() / 1000);
    for (const past of ["1000000000", String(now - 1), "0"]) {
      const refused = runCommand(["license", "issue", "--private-key", keyFile, "--subject", "x", "--expires", past]);
      expect(refused.code, past).toBe(2);
      expect(refused.stdout, past).toBe("");
      expect(refused.stderr, past).toMatch(/--expires .*(past|not in the future)/);
    }
    const future = runCommand(["license", "issue", "--private-key", keyFile, "--subject", "x", "--expires", String(now + 3600)]);
    expect(future.code).toBe(0);
    expect(runCommand(["license", "issue", "--private-key", join(dir, "missing.pem"), "--subject", "x"]).code).toBe(2);
    writeFileSync(join(dir, "not-a-key.pem"), "hello");
    expect(runCommand(["license", "issue", "--private-key", join(dir, "not-a-key.pem"), "--subject", "x"]).code).toBe(2);
  });
});

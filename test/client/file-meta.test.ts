import { createCipheriv, hkdfSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_FILE_META_CHARS, openFileMeta, sealFileMeta } from "../../packages/client/src/file-meta.js";

// A file link's metadata shown before the reveal (docs/share.md, "Files"): the published vector
// recomputed with node:crypto alone from the description, then the client's WebCrypto code checked against it.

const LINK_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"; // bytes 0..31
const NONCE = Buffer.from(Array.from({ length: 12 }, (_, i) => 0xa0 + i));
const META = { name: "hello.txt", type: "text/plain", size: 13 };
const VECTOR = "oKGio6SlpqeoqaqrHLHa598ByW5I2B4mT2CzJTroO14l7xVZ8d_zut5gWN_firHblXMgvkLQUeKD08Ydu3_XaKSVU6acYCNhx_S8WNzfdFLLzVGYbXopekfDIOxqnGDi6y_RMrVUxwnZyvbZtuAedfdEPBSos2fgIdjpO3PtQdiIKhhCPGWEFvh9dAYL-2vMJFTxHwGFtVb7feP5PBN3faQ4EwoFkJPZZW8Dh6rijbTxXqFXVxEfFSrKPc_8xG41_k1lwdp1cA7TFoJDp3gNYXVVNhznWG-HqKS_zFApGjt0EAW1nv-Cxjo7r_bEX_UJenw9zE2PDMrk7lKdTEoxib3bnohwLLXZiHr51NVRd3Q4SzDFRiC-kAdx6gOZn307aa06Np6QEiKzy2h1E6egERwXb1qdfP0SJM4CU2a_N_SQwfz2yAdS6mkRNdW8_mXQ02vIWO8v2boONR7WVpjYUlCykpEsuzPEha5_OjGQKfegN9feycuhnQKo_2FoMAycgG3NY4nLENxE2T3NO8xvmEkRlfS8zVIG7MD1vDpVfND7lISh3_yfDxw2anK9R0xsoBY5UHw93raAvP_MJV1mJeLLsukojhn4ppXc0iys_MRmZ8EsPJvjteLwaVdHFIqpiHAHf2snvtOJXVLZGCdB7kgEyo6nG_D8B-h3H_dYV1bQJ4DXdUfWkFE26L7dUHDFBkx8TgSmeFZD_TkWbgiBnj3ETjgLIYQrMx16B1X00IP9eG3Pj6kILeiDB54vupMsTCc-4an7hDftT1HejfgAR9HcZf7j1biDhNaVWXO6urNvtPvNP-VYqORdKsplIgr5Cp8ZSY5ab7AL2NYQ5f_ORE1HiqcRjqN01muAv2HbCeXsr8CByvRnXUxSPtzi-fnQ37Hdza3yDxb9HAl2ngrZDxgfkJARfsVbOsLnWjH3Fl4g6Nn3Q-YaJqgy0ZNxhyD3EDoEHdIkZLnBzcccx7lZeovI37UwrkstjxeTu6Il6j4EJapAfL-AYIeVwzIfvGiHCA8gNFC4IbWA5jRYvFAuoxClP5ncN8vtD8C9xioEmawx13fMsM21Fu8PvUQytIYOkIABapWinde_WH2aCivoDftNONTUJu0a0BGuOwB-wg8VE8NrvilrQfxctMpu9UXKlxDijsPzZcgjFcK2C_R-NILb_-C3hk46Ok_c29Wtyo1QDWyGqfu8OKu_zUzqT0rL54X6Zp6uhXBrYmQQl0NZzDe4EZD1CtyQiTnPhkO6BlPI_5DGu-RRd459hSsW5XfF9wtGs33wo3QNmikAtbuz1YyNSsUt0pqrXwCWWkxEZ919ELEDB1cs67y1wVPZPmNsEREgMQReVtcUn3p9v6xKmtZyGjE";

/** The field made with node:crypto alone, step by step from docs/share.md. */
function independentSeal(linkKey: Buffer, nonce: Buffer, plaintext: string): string {
  const label = "ephemeral-vault file meta v1";
  const key = Buffer.from(hkdfSync("sha256", linkKey, Buffer.alloc(0), label, 32));
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(label, "utf8"));
  return Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]).toString("base64url");
}

describe("the published file meta vector", () => {
  it("is what node:crypto alone makes, what sealFileMeta makes, and opens to the name, type and size", async () => {
    const linkKey = Buffer.from(LINK_KEY, "base64url");
    expect(independentSeal(linkKey, NONCE, JSON.stringify(META).padEnd(1000, " "))).toBe(VECTOR);
    expect(await sealFileMeta(LINK_KEY, META, { nonce: new Uint8Array(NONCE) })).toBe(VECTOR);
    expect(await openFileMeta(VECTOR, LINK_KEY)).toEqual(META);
  });

  it("is the one docs/share.md publishes", () => {
    const doc = readFileSync(join(import.meta.dirname, "../..", "docs", "share.md"), "utf8");
    for (const text of [VECTOR, JSON.stringify(META), "ephemeral-vault file meta v1"]) expect(doc).toContain(text);
  });
});

describe("a file meta", () => {
  it("uses a fresh nonce each time and opens only under its link key", async () => {
    const a = await sealFileMeta(LINK_KEY, META);
    const b = await sealFileMeta(LINK_KEY, META);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await openFileMeta(a, LINK_KEY)).toEqual(META);
    const other = Buffer.alloc(32, 7).toString("base64url");
    expect(await openFileMeta(a, other)).toBeUndefined();
  });

  it("that is damaged, out of shape or under a bad key opens to undefined, never throws", async () => {
    const field = await sealFileMeta(LINK_KEY, META);
    const flipped = Buffer.from(field, "base64url");
    flipped[20] = (flipped[20] ?? 0) ^ 1;
    expect(await openFileMeta(flipped.toString("base64url"), LINK_KEY)).toBeUndefined();
    expect(await openFileMeta("not base64url!", LINK_KEY)).toBeUndefined();
    expect(await openFileMeta("", LINK_KEY)).toBeUndefined();
    expect(await openFileMeta(field, "short")).toBeUndefined();
    const badShape = independentSeal(Buffer.from(LINK_KEY, "base64url"), NONCE, JSON.stringify({ name: "x", type: "no type", size: 1 }));
    expect(await openFileMeta(badShape, LINK_KEY)).toBeUndefined();
    const negative = independentSeal(Buffer.from(LINK_KEY, "base64url"), NONCE, JSON.stringify({ name: "x", type: "text/plain", size: -1 }));
    expect(await openFileMeta(negative, LINK_KEY)).toBeUndefined();
  });

  it("is as long for a one-letter name as for the longest: the vault learns nothing of the name from it", async () => {
    const short = await sealFileMeta(LINK_KEY, { name: "a", type: "text/plain", size: 1 });
    const long = await sealFileMeta(LINK_KEY, { name: `${"ü".repeat(125)}.pdf`, type: "application/pdf", size: 64 * 1024 * 1024 });
    expect([short.length, long.length]).toEqual([1371, 1371]);
  });

  it("of the longest name fits the vault's 1,400 characters", async () => {
    const longest = await sealFileMeta(LINK_KEY, { name: `${"ü".repeat(125)}.pdf`, type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", size: 64 * 1024 * 1024 });
    expect(longest.length).toBeLessThanOrEqual(MAX_FILE_META_CHARS);
  });
});

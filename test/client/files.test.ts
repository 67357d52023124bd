import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VaultApiError, VaultClient } from "@ephemeral-vault/client";
import type { Opened, SharedFile } from "@ephemeral-vault/client";
import { E2E_MASTER_KEY, cleanupTemp, killChildren, startVault, tempDir } from "../support/e2e-helpers.js";
import { rejection } from "../support/helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// The client's files (docs/client.md, "Files"): share({file}) seals an envelope of version 3 and
// open() answers {file} for it, a string for a text link, against a real server process.

let vault: VaultProcess;
let client: VaultClient;
beforeAll(async () => {
  vault = await startVault(tempDir(), { env: { VAULT_MAX_FILE_BYTES: "65536" } });
  client = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY });
});
afterAll(async () => {
  await killChildren();
  cleanupTemp();
});

const all = (n: number) => Uint8Array.from({ length: n }, (_, i) => i & 0xff);

describe("share({file}) and open()", () => {
  it("give back the name, type and bytes of a file, and a string for text", async () => {
    const file: SharedFile = { name: "keys.tar.gz", type: "application/gzip", bytes: all(65_536) };
    const shared = await client.share({ file }, { maxReads: 1, passphrase: "twelve chars or more" });
    // The fragment says passphrase, then file (docs/share.md, "Links").
    expect(shared.url).toMatch(/\/s\/[0-9a-f]{64}#[A-Za-z0-9_-]{43}\.p\.f$/);
    const opened: Opened = await new VaultClient({ addr: vault.url }).open(shared.url, { passphrase: "twelve chars or more" });
    if (typeof opened === "string") throw new Error("a file opened as text");
    expect(opened.file.name).toBe("keys.tar.gz");
    expect(opened.file.type).toBe("application/gzip");
    expect(Buffer.from(opened.file.bytes).equals(Buffer.from(file.bytes))).toBe(true);
    const text = await client.share("just text");
    expect(text.url).toMatch(/#[A-Za-z0-9_-]{43}$/);
    expect(await client.open(text.url)).toBe("just text");
  });

  it("refuses a file over the vault's VAULT_MAX_FILE_BYTES (413, the limit named), plain with a file, and a bad name before sending", async () => {
    const err = await rejection(client.share({ file: { name: "big.bin", type: "application/octet-stream", bytes: all(65_537) } }));
    expect(err).toBeInstanceOf(VaultApiError);
    expect(err).toMatchObject({ status: 413, message: expect.stringContaining("the file may be at most 65536 bytes") });
    await expect(client.share({ file: { name: "a", type: "text/plain", bytes: all(1) } }, { plain: true })).rejects.toThrow(/end to end/);
    await expect(client.share({ file: { name: "", type: "text/plain", bytes: all(1) } })).rejects.toThrow(/name/);
  });
});

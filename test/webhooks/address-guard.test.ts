import { describe, expect, it } from "vitest";
import { checkWebhookTarget, isPublicAddress, parseWebhookUrl } from "../../src/webhooks/address-guard.js";
import type { Lookup } from "../../src/webhooks/address-guard.js";
import { expectStatus } from "../support/org-helpers.js";
import { useWebhookFixtures, vaultWith, createWebhook, countRows } from "../support/webhook-helpers.js";

useWebhookFixtures();

describe("the address guard", () => {
  it("accepts only public unicast addresses", () => {
    for (const ok of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"]) expect(isPublicAddress(ok), ok).toBe(true);
    for (const bad of [
      "127.0.0.1",
      "127.255.255.254",
      "10.0.0.1",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "0.0.0.0",
      "100.64.0.1",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "::ffff:7f00:1",
      "::ffff:93.184.216.34",
      "::7f00:1",
      "::127.0.0.1",
      "::a00:1",
      "::8.8.8.8",
      "::2",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "64:ff9b::7f00:1",
      "2002:7f00:1::",
      "not an address",
      "2130706433",
    ]) {
      expect(isPublicAddress(bad), bad).toBe(false);
    }
  });

  const refused = [
    "https://127.0.0.1",
    "https://127.0.0.1:8443/hook",
    "https://localhost",
    "https://LOCALHOST./x",
    "https://api.localhost",
    "https://10.0.0.1",
    "https://172.16.5.4",
    "https://192.168.0.10",
    "https://[::1]",
    "https://[::ffff:127.0.0.1]",
    "https://[::ffff:7f00:1]",
    "https://[::127.0.0.1]/",
    "https://[::7f00:1]",
    "https://[::10.0.0.1]",
    "https://[fe80::1]",
    "https://[fd00::1]",
    "https://2130706433",
    "https://0177.0.0.1",
    "https://0x7f.0.0.1",
    "https://127.1",
    "https://169.254.169.254/latest/meta-data",
    "https://0.0.0.0",
    "https://0",
    "https://100.64.0.1",
  ];

  it.each(refused)("refuses %s at creation without resolving anything", async (url) => {
    const v = vaultWith({ allowPrivate: false });
    const res = await v.asMaster("POST", "/webhooks", { url, events: ["*"] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: string };
    expect(body.error).toMatch(/non-public address/);
    expect(await countRows(v, "webhooks")).toBe(0);
  });

  it("refuses a host name that resolves to a private address, or to any private address among public ones", async () => {
    const answers: Record<string, string[]> = {
      "internal.example": ["10.1.2.3"],
      "mixed.example": ["93.184.216.34", "127.0.0.1"],
      "mapped.example": ["::ffff:10.0.0.1"],
      "public.example": ["93.184.216.34", "2606:4700::6810:84e5"],
    };
    const lookup: Lookup = async (host) => answers[host] ?? Promise.reject(new Error("ENOTFOUND"));
    const v = vaultWith({ allowPrivate: false, lookup });
    for (const host of ["internal.example", "mixed.example", "mapped.example"]) {
      const res = await v.asMaster("POST", "/webhooks", { url: `https://${host}/hook`, events: ["*"] });
      expect(res.status, host).toBe(400);
    }
    expect(await countRows(v, "webhooks")).toBe(0);
    await createWebhook(v, { url: "https://public.example/hook", events: ["*"] });
    expect(await countRows(v, "webhooks")).toBe(1);
  });

  it("accepts a host name that does not resolve (it resolves to no refused address); delivery checks it again", async () => {
    const v = vaultWith({ allowPrivate: false, lookup: () => Promise.reject(Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" })) });
    const hook = await createWebhook(v, { url: "https://nowhere.example/hook", events: ["*"] });
    expect(hook.url).toBe("https://nowhere.example/hook");
    await expectStatus(v.asMaster("POST", "/secrets", { key: "k", value: "v" }), 201);
    expect(await v.webhooks.worker.tick()).toBe(1);
    const { deliveries } = (await expectStatus(v.asMaster("GET", `/webhooks/${hook.id as string}/deliveries`), 200)) as {
      deliveries: { status: string; error: string }[];
    };
    expect(deliveries).toEqual([expect.objectContaining({ status: "retrying", error: "connection failed (ENOTFOUND)" })]);
  });

  it("accepts a public address literal without a lookup", async () => {
    const v = vaultWith({ allowPrivate: false });
    const body = await createWebhook(v, { url: "https://93.184.216.34:8443/hook?x=1", events: ["*"] });
    expect(body.url).toBe("https://93.184.216.34:8443/hook?x=1");
  });

  it("lets VAULT_WEBHOOK_ALLOW_PRIVATE lift the guard", async () => {
    const v = vaultWith({ allowPrivate: true });
    for (const url of ["https://127.0.0.1:9999/hook", "https://localhost/hook", "https://[::1]/"]) {
      await createWebhook(v, { url, events: ["*"] });
    }
    expect(await countRows(v, "webhooks")).toBe(3);
  });

  it("checks the syntax of the url whatever the guard setting", async () => {
    for (const url of [
      "http://93.184.216.34/hook",
      "ftp://93.184.216.34/",
      "93.184.216.34/hook",
      "https://",
      "https://user:pass@93.184.216.34/",
      "javascript:alert(1)",
      `https://93.184.216.34/${"a".repeat(2100)}`,
    ]) {
      expect(() => parseWebhookUrl(url), url).toThrow();
    }
    const v = vaultWith({ allowPrivate: true });
    const res = await v.asMaster("POST", "/webhooks", { url: "http://127.0.0.1/secret-path-xyz", events: ["*"] });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).toContain("https://");
    expect(text).not.toContain("secret-path-xyz");
  });

  it("checks every address a name resolves to", async () => {
    await expect(
      checkWebhookTarget(new URL("https://slow.example/"), false, async () => ["127.0.0.1"]),
    ).rejects.toThrow(/non-public/);
    await expect(checkWebhookTarget(new URL("https://ok.example/"), false, async () => ["93.184.216.34"])).resolves.toBeUndefined();
  });
});

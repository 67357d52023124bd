import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Masker, maskForms } from "../src/inject/mask.js";

/** Runs `chunks` through the masker's stream and returns what comes out. */
async function throughStream(masker: Masker, chunks: Buffer[]): Promise<string> {
  return text(Readable.from(chunks).pipe(masker.stream()));
}

describe("masking injected values", () => {
  const value = "s3cr3t value/+?&\"é";
  const masker = new Masker(new Map([["API_KEY", value]]));

  it("masks the value and its base64, base64url, percent and JSON forms", () => {
    const raw = Buffer.from(value, "utf8");
    const forms = [
      value,
      raw.toString("base64"),
      raw.toString("base64").replace(/=+$/, ""),
      raw.toString("base64url"),
      encodeURIComponent(value),
      JSON.stringify(value).slice(1, -1),
      JSON.stringify({ v: value }),
      encodeURIComponent(value).replace(/%2F/g, "/"),
      JSON.stringify(value).slice(1, -1).replace("é", "\\u00e9"),
    ];
    for (const form of forms) {
      const out = masker.maskText(`before ${form} after`);
      expect(out, form).not.toContain(form.replace(/^\{"v":"|"\}$/g, ""));
      expect(out).toContain("<masked:API_KEY>");
      expect(out.startsWith("before ")).toBe(true);
    }
  });

  it("catches a value split across chunks at every position, and keeps other bytes exact", async () => {
    const output = Buffer.from(`line one ${value} middle ${Buffer.from(value).toString("base64")} end ünï`, "utf8");
    for (let cut = 1; cut < output.length; cut++) {
      const out = await throughStream(masker, [output.subarray(0, cut), output.subarray(cut)]);
      expect(out).toBe("line one <masked:API_KEY> middle <masked:API_KEY> end ünï");
    }
  });

  it("passes on at once what cannot begin a value, holding back only a possible start", async () => {
    const stream = masker.stream();
    const seen: string[] = [];
    stream.on("data", (chunk: Buffer) => seen.push(chunk.toString("utf8")));
    stream.write(Buffer.from("ready\n"));
    stream.write(Buffer.from(`then ${value.slice(0, 5)}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.join("")).toBe("ready\nthen ");
    stream.end(Buffer.from(value.slice(5)));
    await new Promise((resolve) => stream.once("end", resolve));
    expect(seen.join("")).toBe("ready\nthen <masked:API_KEY>");
  });

  it("never lets a value through, whatever the chunking (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ minLength: 4, maxLength: 24 }), fc.string(), fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 20 }), async (secret, noise, sizes) => {
        const m = new Masker(new Map([["S", secret]]));
        const whole = Buffer.from(`${noise}${secret}${noise}${secret}`, "utf8");
        const chunks: Buffer[] = [];
        let at = 0;
        for (const size of sizes) {
          if (at >= whole.length) break;
          chunks.push(whole.subarray(at, at + size));
          at += size;
        }
        if (at < whole.length) chunks.push(whole.subarray(at));
        const out = await throughStream(m, chunks);
        expect(out.includes(secret)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it("does not mask values shorter than 4 characters, and names them", () => {
    const m = new Masker(new Map([["SHORT", "abc"], ["EMPTY", ""], ["LONG", "abcd"]]));
    expect(m.unmasked).toEqual(["SHORT"]);
    expect(m.maskText("abc abcd")).toBe("abc <masked:LONG>");
  });

  it("lists each form once, longest first", () => {
    const forms = maskForms("plainvalue");
    expect(new Set(forms).size).toBe(forms.length);
    expect(forms).toContain("cGxhaW52YWx1ZQ==");
    expect(forms).toContain("cGxhaW52YWx1ZQ");
  });
});

import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Masker, maskForms } from "../../src/inject/mask.js";

/** Runs `chunks` through the masker's stream and returns what comes out. */
async function throughStream(masker: Masker, chunks: Buffer[]): Promise<string> {
  return text(Readable.from(chunks).pipe(masker.stream()));
}

/** `whole` cut into chunks of the given sizes, the rest in one last chunk. */
function chunked(whole: Buffer, sizes: readonly number[]): Buffer[] {
  const chunks: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= whole.length) break;
    chunks.push(whole.subarray(at, at + size));
    at += size;
  }
  if (at < whole.length) chunks.push(whole.subarray(at));
  return chunks;
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
        const out = await throughStream(m, chunked(whole, sizes));
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

  it("masks a value JSON-escaped twice (a JSON body echoed inside a JSON answer)", () => {
    const value = 'tok"en\\x/ü';
    const m = new Masker(new Map([["T", value]]));
    const echoed = JSON.stringify({ data: JSON.stringify({ token: value }) });
    expect(m.maskText(echoed)).toBe(JSON.stringify({ data: '{"token":"<masked:T>"}' }));
  });

  describe("a value that overlaps another (a decoy)", () => {
    const real = "postgres://app:S3cr3t@db.internal/app";
    const values = new Map([["ZZ_15", "URL=p"], ["DB_URL", real]]);

    it("masks the union of both matches, so the decoy cannot expose the rest of the real value", () => {
      const m = new Masker(values);
      const out = m.maskText(`DB_URL=${real} done`);
      expect(out).not.toContain("S3cr3t");
      expect(out).not.toContain("ostgres");
      expect(out).toBe("DB_<masked:DB_URL> done");
    });

    it("holds at every chunk boundary in a stream", async () => {
      const m = new Masker(values);
      const whole = Buffer.from(`x DB_URL=${real} and ${Buffer.from(real).toString("base64")} end`, "utf8");
      for (let cut = 1; cut < whole.length; cut++) {
        const out = await throughStream(m, [whole.subarray(0, cut), whole.subarray(cut)]);
        expect(out).toBe("x DB_<masked:DB_URL> and <masked:DB_URL> end");
      }
    });

    it("masks a decoy that starts inside the real value and runs past it", () => {
      const m = new Masker(new Map([["A", "S3cr3t@db.internal/app TAIL"], ["B", real]]));
      expect(m.maskText(`${real} TAIL!`)).toBe("<masked:B>!");
    });

    it("never lets a value through beside decoys made from its own pieces (property)", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.string({ minLength: 6, maxLength: 24 }),
          fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ maxLength: 4 })), { maxLength: 4 }),
          fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 20 }),
          async (secret, decoySpecs, sizes) => {
            const entries: Array<[string, string]> = [["S", secret]];
            decoySpecs.forEach(([a, b, pad], i) => {
              // A decoy: a piece of the secret with a few characters before or after it.
              const from = a % secret.length;
              const piece = secret.slice(from, from + 1 + (b % (secret.length - from)));
              const decoy = i % 2 === 0 ? `${pad}${piece}` : `${piece}${pad}`;
              if (decoy.length >= 4) entries.push([`D${i}`, decoy]);
            });
            const m = new Masker(new Map(entries));
            const whole = Buffer.from(entries.map(([, v]) => `${v}|${secret}`).join(" "), "utf8");
            expect((await throughStream(m, chunked(whole, sizes))).includes(secret)).toBe(false);
            expect(m.maskText(whole.toString("utf8")).includes(secret)).toBe(false);
          },
        ),
        { numRuns: 300 },
      );
    });

    it("does not hold a value repeated over itself without bound, and still masks all of it", async () => {
      const m = new Masker(new Map([["R", "abab"]]));
      const chunk = Buffer.from("ab".repeat(20_000));
      const stream = m.stream();
      const seen: Buffer[] = [];
      stream.on("data", (c: Buffer) => seen.push(c));
      for (let i = 0; i < 8; i++) stream.write(chunk);
      await new Promise((resolve) => setImmediate(resolve));
      // 320,000 bytes went in; most of the run was passed on (masked) before its end.
      expect(Buffer.concat(seen).length).toBeGreaterThan(0);
      stream.end(Buffer.from(" end"));
      await new Promise((resolve) => stream.once("end", resolve));
      const out = Buffer.concat(seen).toString("utf8");
      expect(out).not.toContain("abab");
      expect(out.endsWith(" end")).toBe(true);
    });
  });
});

import { describe, expect, it } from "vitest";
import { parseEnvelope, sealEnvelope, sealFileEnvelope } from "@ephemeral-vault/client";
import { envelopeShape } from "../../../../src/http/routes/secrets/bodies.js";

// The vault's check of an envelope without parsing a file's whole ciphertext (docs/performance.md,
// "Files"): it must say exactly what parseEnvelope says, whatever the text.

/** What parseEnvelope makes of `text`, in envelopeShape's terms. */
const full = (text: string) => {
  const env = parseEnvelope(text);
  return env === undefined ? undefined : { v: env.v, ctLength: env.ct.length };
};

describe("envelopeShape", () => {
  it("agrees with parseEnvelope on real envelopes and on texts made to mislead a shortcut", async () => {
    const file = (await sealFileEnvelope({ name: "a.bin", type: "application/octet-stream", bytes: new Uint8Array(5000) })).envelope;
    const text = (await sealEnvelope("hello", { passphrase: "a passphrase of some length" })).envelope;
    const head = '{"v":3,"alg":"A256GCM","kdf":"none","iv":"oKGio6Slpqeoqaqr"';
    const cases = [
      file,
      text,
      `${head},"ct":"${"A".repeat(4000)}"}`,
      // A later duplicate, plain or escaped, wins in JSON.parse: the first ct is not the one that counts.
      `${head},"ct":"${"A".repeat(4000)}","ct":""}`,
      `${head},"ct":"${"A".repeat(4000)}","c\\u0074":"B"}`,
      // A nested ct first; an escape inside ct; ct not last; no ct; not JSON; a plain value.
      `{"x":{"ct":"${"A".repeat(100)}"},"v":3,"alg":"A256GCM","kdf":"none","iv":"oKGio6Slpqeoqaqr","ct":"QUJD"}`,
      `${head},"ct":"AB\\u0043D"}`,
      '{"ct":"QUJD","v":2,"alg":"A256GCM","kdf":"none","iv":"oKGio6Slpqeoqaqr"}',
      `${head}}`,
      `${head},"ct":"QUJD"`,
      "just a value",
      '{"A\\"ct":"QUJD"}',
    ];
    for (const c of cases) expect(envelopeShape(c), c.slice(0, 120)).toEqual(full(c));
    expect(envelopeShape(file)?.v).toBe(3);
    expect(envelopeShape(`${head},"ct":"${"A".repeat(4000)}","ct":""}`)).toEqual({ v: 3, ctLength: 0 });
  });
});

import { describe, expect, it } from "vitest";
import { redactCredentials, redactUrl } from "../../../src/store/pg/redact.js";

// Every form a connection string carries its password in: none may reach a
// log line, an error or an output line (docs/scaling.md, "Turning it on").
const FORMS: { form: string; url: string; secrets: string[]; keeps: string }[] = [
  { form: "user:password@", url: "postgres://vault:s3cr3t-pw@db.internal:5432/vault?sslmode=require", secrets: ["s3cr3t-pw"], keeps: "db.internal:5432/vault" },
  { form: "percent-encoded user:password@", url: "postgres://vault:p%40ss%20w0rd@db/vault", secrets: ["p%40ss%20w0rd", "p@ss w0rd"], keeps: "db/vault" },
  { form: "?password=", url: "postgres://vault@db:5432/vault?password=s3cr3t-pw&sslmode=require", secrets: ["s3cr3t-pw"], keeps: "sslmode=require" },
  { form: "?PGPASSWORD=", url: "postgresql://vault@db/vault?PGPASSWORD=s3cr3t-pw", secrets: ["s3cr3t-pw"], keeps: "db/vault" },
  { form: "?sslpassword=", url: "postgres://vault@db/vault?sslpassword=key-pass-1", secrets: ["key-pass-1"], keeps: "db/vault" },
  { form: "key/value password=", url: "host=db port=5432 user=vault password=s3cr3t-pw dbname=vault", secrets: ["s3cr3t-pw"], keeps: "host=db" },
  { form: "key/value password='quoted'", url: "host=db password='s3 cr\\'3t' dbname=vault", secrets: ["s3 cr\\'3t", "s3 cr'3t"], keeps: "dbname=vault" },
  { form: "unparsable URL with user:password@", url: "postgres://vault:s3cr3t pw@db/vault", secrets: ["s3cr3t pw"], keeps: "db/vault" },
];

describe("redactUrl and redactCredentials", () => {
  for (const { form, url, secrets, keeps } of FORMS) {
    it(`hides the password given as ${form}, keeping where the database is`, () => {
      const shown = redactUrl(url);
      for (const secret of secrets) expect(shown).not.toContain(secret);
      expect(shown).toContain("***");
      expect(shown).toContain(keeps);
      const message = `connect failed for ${url}: password ${secrets.join(" and ")} refused`;
      const cleaned = redactCredentials(message, url);
      for (const secret of secrets) expect(cleaned).not.toContain(secret);
      expect(cleaned).toContain("connect failed for");
    });
  }

  it("leaves a URL without a password as it is", () => {
    expect(redactUrl("postgres://vault@db:5432/vault?sslmode=verify-full")).toBe("postgres://vault@db:5432/vault?sslmode=verify-full");
    expect(redactCredentials("connect ECONNREFUSED 127.0.0.1:5432", "postgres://vault@db/vault")).toBe("connect ECONNREFUSED 127.0.0.1:5432");
  });
});

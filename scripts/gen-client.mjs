// npm run gen:client: builds the vault in-process from dist/ (run after npm
// run build), reads GET /openapi.json and writes packages/client/src/schema.d.ts.
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger, createVault, openDatabase, SqliteEngine, ValueCipher } from "../dist/internal.js";
import { renderSchema, SCHEMA_PATH } from "./client-schema.mjs";

const root = join(import.meta.dirname, "..");
const cipher = new ValueCipher(randomBytes(32));
const log = createLogger("silent");
const engine = new SqliteEngine(openDatabase(":memory:"), { auditChainKey: cipher.auditChainKeys().get(cipher.currentKeyId) ?? null, log });
const vault = createVault(engine, {
  cipher,
  log,
  masterKey: randomBytes(16).toString("hex"),
  now: () => Date.now(),
  activeLimit: () => null,
  publicUrl: "http://127.0.0.1:8484",
  maxValueBytes: 65_536,
  trustProxy: false,
});
const res = await vault.app.request("/openapi.json");
if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}`);
writeFileSync(join(root, SCHEMA_PATH), await renderSchema(await res.json()));
console.log(`wrote ${SCHEMA_PATH}`);
process.exit(0);

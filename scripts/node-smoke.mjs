// A smoke run of the built command on the Node.js that runs this script (docs/testing.md,
// "Node.js versions"): `.ci/run` runs it on the current Node.js release, which gets no full
// suite. It starts `bin/ephemeral-vault.js serve` on :memory: and a free port, puts and gets a
// secret with the client package, makes a share link and loads its page (GET /s/<id>), reveals
// the link with the client, and stops the vault with SIGTERM (exit 0). Each step prints a line;
// the last line is "smoke: N passed, N failed". Exits 1 when a step fails.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { VaultClient } from "@ephemeral-vault/client";

const bin = fileURLToPath(new URL("../bin/ephemeral-vault.js", import.meta.url));
const results = [];

/** Runs one named step; a thrown error fails it (and the run). */
async function step(name, fn) {
  try {
    await fn();
    results.push(true);
    console.log(`ok   ${name}`);
  } catch (err) {
    results.push(false);
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

const env = { ...process.env, VAULT_LOG_LEVEL: "warn" };
for (const name of Object.keys(env)) if (name.startsWith("VAULT_") && name !== "VAULT_LOG_LEVEL") delete env[name];
const child = spawn(process.execPath, [bin, "serve", "--data-dir", ":memory:", "--port", "0", "--print-url-json"], {
  env,
  stdio: ["ignore", "pipe", "pipe"],
});
let stderr = "";
child.stderr.on("data", (chunk) => {
  stderr += chunk;
});
const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
let vault;

await step(`start on Node ${process.version}`, async () => {
  const [line] = await Promise.race([
    once(createInterface({ input: child.stdout }), "line"),
    once(child, "exit").then(([code]) => Promise.reject(new Error(`exited ${code} before listening: ${stderr}`))),
  ]);
  vault = JSON.parse(line);
  check(typeof vault.url === "string" && typeof vault.token === "string", `not a url and a token: ${line}`);
});

if (vault !== undefined) {
  const client = new VaultClient({ addr: vault.url, token: vault.token, org: null });
  await step("put", async () => {
    await client.put("smoke/db_password", "smoke-value");
  });
  await step("get", async () => {
    const read = await client.get("smoke/db_password");
    check(read.value === "smoke-value", `read ${JSON.stringify(read.value)}`);
  });
  let link;
  await step("share page", async () => {
    link = (await client.share("shared-value", { ttlSeconds: 600, maxReads: 1 })).url;
    const page = await fetch(new URL(link).href.replace(/#.*/, ""));
    check(page.status === 200, `GET /s/<id> answered ${page.status}`);
    check((page.headers.get("content-type") ?? "").startsWith("text/html"), `content-type ${page.headers.get("content-type")}`);
    check((page.headers.get("content-security-policy") ?? "").includes("default-src"), "no Content-Security-Policy");
    const opened = await new VaultClient({ addr: vault.url, org: null }).open(link);
    check(opened === "shared-value", `revealed ${JSON.stringify(opened)}`);
  });
}

await step("stop (SIGTERM, exit 0)", async () => {
  if (child.exitCode === null) child.kill("SIGTERM");
  const [code, signal] = child.exitCode === null ? await once(child, "exit") : [child.exitCode, null];
  check(code === 0, `exit ${code} ${signal ?? ""} ${stderr}`);
});
clearTimeout(killer);

const passed = results.filter(Boolean).length;
console.log(`smoke: ${passed} passed, ${results.length - passed} failed`);
process.exitCode = passed === results.length ? 0 : 1;

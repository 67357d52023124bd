// Where a GET's CPU goes without sockets, wrk or the kernel's network stack: run by hand after `npm run build`.
//   node bench/in-process.mjs            (env: BATCH=49 concurrent GETs per batch, BATCHES=600 per round, ROUNDS=4)
// Three layers, measured in the same process, alternating, on a temporary file database (WAL,
// synchronous=FULL), each in batches of BATCH concurrent requests so the group commit shares one COMMIT:
//   read  the durable read alone: the lifecycle's retrieve in a unit of work (guarded read count,
//         decrypt, the secret.read audit row, the COMMIT and its fsync);
//   app   the vault's whole GET /secrets/:key through app.fetch (the front middleware: request id,
//         bearer token, metrics; routing, the permission check, the handler, the JSON answer), with a
//         request object and Node bindings built per request, as @hono/node-server hands them over
//         (the Node response is a plain ServerResponse: the front middleware sets its three headers
//         with setHeader, where the server's VaultResponse writes them in writeHead, a little more);
//   bare  a Hono app with one route giving the same JSON answer from constants (the floor of `app`).
// Prints per layer the median over rounds (the first round is a warm-up) of wall time and of process
// CPU time (user + system, and user alone) per request, in microseconds. `app` minus `read` is what
// the vault's HTTP layer costs above the durable read; `app` minus `bare` what it costs above Hono.
import http from "node:http";
import { Hono } from "hono";
import { VALUE, withLocalVault } from "./local-vault.mjs";

const BATCH = Number(process.env.BATCH ?? 49);
const BATCHES = Number(process.env.BATCHES ?? 600);
const ROUNDS = Number(process.env.ROUNDS ?? 4);

await withLocalVault("in-process", async ({ vault, masterKey, read }) => {
  const bare = new Hono();
  bare.get("/secrets/:key", (c) =>
    c.json({ key: c.req.param("key"), value: VALUE, created_at: "2026-01-01T00:00:00.000Z", expires_at: null, max_reads: null, read_count: 1 }),
  );
  const socket = { remoteAddress: "127.0.0.1" };
  // What @hono/node-server passes: a request (url, method, headers) and the Node request and response as env.
  const request = () => ({ url: "http://127.0.0.1/secrets/bench", method: "GET", headers: new Headers() });
  const bindings = () => {
    const incoming = { headers: { host: "127.0.0.1", authorization: `Bearer ${masterKey}` }, socket, method: "GET", httpVersionMajor: 1, httpVersionMinor: 1 };
    return { incoming, outgoing: new http.ServerResponse(incoming) };
  };
  const check = async (response) => {
    if (response.status !== 200) throw new Error(`GET answered ${response.status}: ${await response.text()}`);
  };

  const layers = {
    read,
    app: () => Promise.resolve(vault.app.fetch(request(), bindings())).then(check),
    bare: () => Promise.resolve(bare.fetch(request(), bindings())).then(check),
  };
  const results = Object.fromEntries(Object.keys(layers).map((name) => [name, { wall: [], cpu: [], user: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, one] of Object.entries(layers)) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let b = 0; b < BATCHES; b++) {
        const pending = [];
        for (let i = 0; i < BATCH; i++) pending.push(one());
        await Promise.all(pending);
      }
      const n = BATCHES * BATCH;
      const cpu = process.cpuUsage(cpu0);
      if (round === 0) continue;
      results[name].wall.push(((performance.now() - t0) * 1000) / n);
      results[name].cpu.push((cpu.user + cpu.system) / n);
      results[name].user.push(cpu.user / n);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(1);
  console.log(`${BATCH} concurrent GETs per batch, ${BATCHES} batches per round, median of ${ROUNDS - 1} rounds (us per request)`);
  console.log("| layer | wall | CPU | of which user |\n|---|---:|---:|---:|");
  for (const [name, r] of Object.entries(results)) console.log(`| ${name} | ${median(r.wall)} | ${median(r.cpu)} | ${median(r.user)} |`);
});

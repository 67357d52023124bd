// Preloaded into a vault by bench/ab.sh (`node --import bench/loop-busy.mjs`): each SIGUSR2
// opens or closes a measurement window; at its close one line is appended to $LOOP_BUSY_OUT:
// "<event-loop busy us per request> <requests in the window>". Busy time is
// performance.eventLoopUtilization()'s active time (the loop not waiting in epoll), in microseconds;
// under a saturating load it is the reciprocal of throughput and moves less with a noisy machine.
import fs from "node:fs";
import http from "node:http";
import { performance } from "node:perf_hooks";

const out = process.env.LOOP_BUSY_OUT;
let requests = 0;
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function countRequests(event, ...args) {
  if (event === "request") requests++;
  return emit.call(this, event, ...args);
};
let open = null;
process.on("SIGUSR2", () => {
  if (open === null) {
    open = { elu: performance.eventLoopUtilization(), requests };
    return;
  }
  const busy = performance.eventLoopUtilization(open.elu).active; // ms
  const n = requests - open.requests;
  open = null;
  if (out && n > 0) fs.appendFileSync(out, `${((busy * 1000) / n).toFixed(1)} ${n}\n`);
});

import { describe, expect, it } from "vitest";
import { LargeBodyQueue } from "../../../src/http/routes/large-body-queue.js";

// The queue that hands large bodies their turn one at a time (docs/performance.md, "Files").

describe("LargeBodyQueue", () => {
  it("gives the turn to one holder at a time, first come first served; a second release does nothing", async () => {
    const q = new LargeBodyQueue();
    const order: string[] = [];
    const first = await q.acquire();
    const holders = ["b", "c", "d"].map((name) =>
      q.acquire().then((release) => {
        order.push(`${name} in`);
        return release;
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    expect(q.queued).toBe(3);
    first();
    first(); // a second release must not let two in
    const b = await holders[0];
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(["b in"]);
    // A newcomer while b holds the turn waits behind c and d.
    const late = q.acquire().then((release) => {
      order.push("late in");
      return release;
    });
    b?.();
    (await holders[1])?.();
    (await holders[2])?.();
    (await late)();
    expect(order).toEqual(["b in", "c in", "d in", "late in"]);
    expect(q.queued).toBe(0);
    // Free again: the next takes it at once.
    (await q.acquire())();
  });
});

import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/log.js";
import { buildTestVault, createKey, MASTER_KEY } from "../support/helpers.js";

/** A vault whose logger writes into `lines` (one parsed JSON object per line). */
function loggedVault() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const log = createLogger("info", {
    write(chunk: string) {
      raw.push(chunk);
      for (const line of chunk.split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { v: buildTestVault({ log }), lines, raw };
}

describe("the request log", () => {
  it("writes one line per request at info: request id, method, route template, status, ms, actor kind", async () => {
    const { v, lines } = loggedVault();
    const res = await v.asMaster("POST", "/secrets", { key: "team/db", value: "s3cr3t-value" });
    const requests = lines.filter((l) => l.msg === "request");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      level: 30,
      requestId: res.headers.get("x-request-id"),
      method: "POST",
      route: "/secrets",
      status: 201,
      actor: "master",
    });
    expect(requests[0]?.ms).toEqual(expect.any(Number));
  });

  it("never carries a key, value, token or path: only the route template", async () => {
    const { v, lines, raw } = loggedVault();
    await v.asMaster("POST", "/secrets", { key: "team/db", value: "s3cr3t-value" });
    const key = await createKey(v, { permissions: ["read"], prefix: "team/" });
    await v.request("GET", "/secrets/team/db", { token: key.token });
    await v.request("GET", "/secrets/team/db?x=1", { token: "vsk_not-a-real-token" });
    const text = raw.join("");
    for (const secret of ["team/db", "s3cr3t-value", key.token, MASTER_KEY, "vsk_not-a-real-token"]) expect(text).not.toContain(secret);
    const routes = lines.filter((l) => l.msg === "request").map((l) => [l.route, l.status, l.actor]);
    expect(routes).toContainEqual(["/secrets/:key{.+}", 200, "scoped"]);
    expect(routes).toContainEqual(["/*", 401, null]);
  });
});

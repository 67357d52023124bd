import { describe, expect, it } from "vitest";
import { buildTestVault } from "../support/helpers.js";

describe("global secrets, in process", () => {
  it("stores a keyed secret and returns its value once per read", async () => {
    const v = buildTestVault();
    const created = await v.asMaster("POST", "/secrets", { key: "db/password", value: "hunter2" });
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ key: "db/password" });
    const read = await v.asMaster("GET", "/secrets/db/password");
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ key: "db/password", value: "hunter2", read_count: 1, max_reads: null });
  });
});

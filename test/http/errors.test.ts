/** The one error mapping (src/http/errors.ts): every error type that reaches the handler, one envelope. */
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { VaultError } from "../../src/model/errors.js";
import { ApiError, errorResponse } from "../../src/http/errors.js";
import { ClosedError } from "../../src/store/sqlite/group-commit.js";
import { createLogger } from "../../src/log/log.js";

async function answer(err: unknown) {
  const app = new Hono();
  app.get("/", () => {
    throw err;
  });
  app.onError((e, c) => errorResponse(e, c, createLogger("silent")));
  const res = await app.request("/");
  return { status: res.status, body: (await res.json()) as unknown, headers: res.headers };
}

describe("errorResponse", () => {
  it("answers an ApiError with its status, {error, message} and headers", async () => {
    const a = await answer(new ApiError(405, "method not allowed", { message: "use GET", headers: { Allow: "GET" } }));
    expect(a).toMatchObject({ status: 405, body: { error: "method not allowed", message: "use GET" } });
    expect(a.headers.get("allow")).toBe("GET");
  });

  it("answers a VaultError with the status of its kind", async () => {
    expect(await answer(new VaultError("conflict", "exists"))).toMatchObject({ status: 409, body: { error: "exists" } });
    expect(await answer(new VaultError("limit", "full", { message: "upgrade" }))).toMatchObject({
      status: 402,
      body: { error: "full", message: "upgrade" },
    });
  });

  it("answers a ClosedError 503 with Retry-After", async () => {
    const a = await answer(new ClosedError());
    expect(a).toMatchObject({ status: 503, body: { error: "the vault is shutting down" } });
    expect(a.headers.get("retry-after")).toBe("1");
  });

  it("answers anything else exactly 500 {error: internal server error}", async () => {
    const a = await answer(new Error("secret detail"));
    expect(a.status).toBe(500);
    expect(a.body).toEqual({ error: "internal server error" });
  });
});

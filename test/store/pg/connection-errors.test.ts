import { describe, expect, it } from "vitest";
import { isConnectionError } from "../../../src/store/pg/connection-errors.js";

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code });

// Which driver errors the PostgreSQL unit of work answers 503 (docs/scaling.md, "When the database goes away").
describe("isConnectionError", () => {
  it("is true for a lost or refused connection", () => {
    for (const err of [
      new Error("Connection terminated unexpectedly"),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
      withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"),
      withCode("read ECONNRESET", "ECONNRESET"),
      withCode("terminating connection due to administrator command", "57P01"),
      withCode("the database system is starting up", "57P03"),
      withCode("sorry, too many clients already", "53300"),
      withCode("connection failure", "08006"),
      withCode("cannot execute INSERT in a read-only transaction", "25006"),
    ]) {
      expect(isConnectionError(err), err.message).toBe(true);
    }
  });

  it("is false for a statement's own error", () => {
    for (const err of [
      withCode('duplicate key value violates unique constraint "secrets_live_key"', "23505"),
      withCode("deadlock detected", "40P01"),
      withCode('relation "nope" does not exist', "42P01"),
      new Error("something else"),
    ]) {
      expect(isConnectionError(err), err.message).toBe(false);
    }
    expect(isConnectionError("Connection terminated")).toBe(false);
  });
});

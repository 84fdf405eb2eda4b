// ChessError against statuses built here: each detail is found by its type whatever its
// position, an unknown reason is UNSPECIFIED with the raw string kept, and a status
// without details keeps its code and message.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { ChessError, Code, ConnectError, ErrorReason, reasonFromName, rpc } from "chess-service-client";

function status(code: Code, message: string, details: ConstructorParameters<typeof ConnectError>[3]): ConnectError {
  return new ConnectError(message, code, undefined, details);
}

const errorInfo = (reason: string, metadata: Record<string, string>) => ({
  desc: rpc.ErrorInfoSchema,
  value: { reason, domain: "chess.v1", metadata },
});
const retryInfo = (seconds: bigint, nanos: number) => ({
  desc: rpc.RetryInfoSchema,
  value: { retryDelay: create(DurationSchema, { seconds, nanos }) },
});

test("details are found by type, whatever their order (RetryInfo first, as RATE_LIMITED sends it)", () => {
  for (const details of [
    [retryInfo(1n, 500_000_000), errorInfo("RATE_LIMITED", { quota: "calls", limit: "5" })],
    [errorInfo("RATE_LIMITED", { quota: "calls", limit: "5" }), retryInfo(1n, 500_000_000)],
  ]) {
    const e = ChessError.from(status(Code.ResourceExhausted, "slow down", details));
    assert.equal(e.code, Code.ResourceExhausted);
    assert.equal(e.reason, ErrorReason.RATE_LIMITED);
    assert.equal(e.reasonName, "RATE_LIMITED");
    assert.deepEqual(e.metadata, { quota: "calls", limit: "5" });
    assert.equal(e.retryDelayMs, 1500);
    assert.equal(e.rawMessage, "slow down");
    assert.equal(e.message, "ResourceExhausted RATE_LIMITED: slow down");
    assert.ok(e instanceof Error && e instanceof ChessError);
  }
});

test("ResourceInfo and BadRequest are read beside the ErrorInfo", () => {
  const e = ChessError.from(
    status(Code.NotFound, "no game 'x'", [
      { desc: rpc.ResourceInfoSchema, value: { resourceType: "chess.v1.Game", resourceName: "x" } },
      errorInfo("GAME_NOT_FOUND", { game_id: "x" }),
      {
        desc: rpc.BadRequestSchema,
        value: { fieldViolations: [{ field: "game_id", description: "unknown" }] },
      },
    ]),
  );
  assert.equal(e.reason, ErrorReason.GAME_NOT_FOUND);
  assert.equal(e.resourceInfo?.resourceType, "chess.v1.Game");
  assert.equal(e.resourceInfo?.resourceName, "x");
  assert.equal(e.badRequest?.fieldViolations[0]?.field, "game_id");
  assert.equal(e.retryDelayMs, undefined);
  assert.equal(e.details(rpc.ErrorInfoSchema).length, 1);
});

test("an unknown reason is ERROR_REASON_UNSPECIFIED and keeps the raw string", () => {
  const e = ChessError.from(status(Code.FailedPrecondition, "new", [errorInfo("A_REASON_FROM_THE_FUTURE", {})]));
  assert.equal(e.reason, ErrorReason.ERROR_REASON_UNSPECIFIED);
  assert.equal(e.reasonName, "A_REASON_FROM_THE_FUTURE");
  assert.equal(e.code, Code.FailedPrecondition);
  assert.equal(reasonFromName("ILLEGAL_MOVE"), ErrorReason.ILLEGAL_MOVE);
  assert.equal(reasonFromName(""), ErrorReason.ERROR_REASON_UNSPECIFIED);
});

test("a status without details keeps its code and message; other errors become ChessError", () => {
  const e = ChessError.from(new ConnectError("gone", Code.Unavailable));
  assert.equal(e.code, Code.Unavailable);
  assert.equal(e.reason, ErrorReason.ERROR_REASON_UNSPECIFIED);
  assert.equal(e.reasonName, "");
  assert.deepEqual(e.metadata, {});
  assert.equal(e.message, "Unavailable: gone");
  const plain = ChessError.from(new Error("boom"));
  assert.equal(plain.code, Code.Unknown);
  assert.equal(plain.rawMessage, "boom");
  assert.equal(ChessError.from(plain), plain);
});

// RATE_LIMITED from the real server (--rate-limit-per-token): RESOURCE_EXHAUSTED whose
// RetryInfo (sent before the ErrorInfo) gives ChessError.retryDelayMs; waiting that long
// lets the next call through.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChessError, Code, ErrorReason } from "chess-service-client";
import { startServer } from "./server.js";

test("RATE_LIMITED carries its metadata and the RetryInfo's delay", async (t) => {
  const server = await startServer({ args: ["--rate-limit-per-token", "2"] });
  t.after(() => server.stop());
  const client = server.client();
  let limited: ChessError | undefined;
  for (let i = 0; i < 20 && limited === undefined; i++) {
    try {
      await client.legalMoves({ position: { case: "fen", value: "8/8/8/8/8/8/8/K6k w - - 0 1" } });
    } catch (e) {
      assert.ok(e instanceof ChessError);
      limited = e;
    }
  }
  assert.ok(limited, "a burst over the quota is refused");
  assert.equal(limited.code, Code.ResourceExhausted);
  assert.equal(limited.reason, ErrorReason.RATE_LIMITED);
  assert.ok(limited.metadata.quota, `metadata names the quota: ${JSON.stringify(limited.metadata)}`);
  assert.ok(limited.retryDelayMs !== undefined && limited.retryDelayMs > 0 && limited.retryDelayMs <= 1000,
    `retryDelayMs ${limited.retryDelayMs}`);
  await new Promise((r) => setTimeout(r, limited!.retryDelayMs! + 50));
  const after = await client.legalMoves({ position: { case: "fen", value: "8/8/8/8/8/8/8/K6k w - - 0 1" } });
  assert.equal(after.moves.length, 3);
});

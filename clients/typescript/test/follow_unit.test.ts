// GameFollower's bookkeeping against scripted streams (as the Python client's
// test_follower_unit.py): what a correct server never sends (a repeated event, a gap) is
// handled too, without skipping or repeating an event; errors other than a dropped stream
// are thrown; an abort ends the loop without an error.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  ChessError,
  Code,
  ConnectError,
  FollowerGaveUp,
  GameFollower,
  GameEventSchema,
  GameSnapshotSchema,
  GameStatus,
  WatchGameResponseSchema,
  rpc,
} from "chess-service-client";
import type { WatchFn, WatchGameResponse } from "chess-service-client";

type Item = number | `resync:${number}` | Error | "hang";

function response(item: number | `resync:${number}`): WatchGameResponse {
  if (typeof item === "string") {
    const resumeFromVersion = BigInt(item.split(":")[1]);
    return create(WatchGameResponseSchema, { message: { case: "resync", value: { resumeFromVersion } } });
  }
  const status = item === 6 ? GameStatus.RESIGNATION : GameStatus.IN_PROGRESS;
  const event = create(GameEventSchema, {
    gameId: "g",
    version: BigInt(item),
    state: create(GameSnapshotSchema, { ply: item, status }),
  });
  return create(WatchGameResponseSchema, { message: { case: "event", value: event } });
}

/** Stands in for the client's watchGame: one scripted stream per call. */
function scripted(scripts: Item[][]) {
  const asked: bigint[] = [];
  const watch: WatchFn = (gameId, fromVersion, signal) => {
    assert.equal(gameId, "g");
    asked.push(fromVersion);
    const items = scripts[asked.length - 1];
    assert.ok(items, `no script for stream ${asked.length} (from ${fromVersion})`);
    return (async function* () {
      for (const item of items) {
        if (item instanceof Error) throw item;
        if (item === "hang") {
          // Waits as a live stream waits for the next event, until the call is cancelled.
          await new Promise((_, reject) =>
            signal.addEventListener("abort", () => reject(new ConnectError("cancelled", Code.Canceled)), {
              once: true,
            }),
          );
        } else {
          yield response(item);
        }
      }
    })();
  };
  return { watch, asked };
}

const unavailable = () => ChessError.from(new ConnectError("Socket closed", Code.Unavailable));

test("drops duplicates, reconnects after errors, resyncs and gaps", async () => {
  const { watch, asked } = scripted([
    [0, 1, 2, unavailable()], // the connection drops
    [2, 3, "resync:4"], // 2 again (dropped), then told to resync
    [4, 6], // a gap: 5 is missing, so it reconnects from 5
    [5, 6], // 6 ends the game
  ]);
  const follower = new GameFollower(watch, "g", { stopWhenOver: true, backoffInitialMs: 0 });
  const versions: bigint[] = [];
  for await (const event of follower) versions.push(event.version);
  assert.deepEqual(versions, [0n, 1n, 2n, 3n, 4n, 5n, 6n]);
  assert.deepEqual(asked, [0n, 3n, 4n, 5n]);
  assert.deepEqual(
    [follower.dropped, follower.duplicates, follower.resyncs, follower.reconnects],
    [1, 1, 1, 3],
  );
  assert.equal(follower.lastVersion, 6n);
});

test("a broken connection without a server status is retried; the server's own errors are thrown", async () => {
  // What Connect-ES makes of a reset connection: ABORTED or INTERNAL, no ErrorInfo.
  const reset = ChessError.from(new ConnectError("read ECONNRESET", Code.Aborted));
  const closed = ChessError.from(new ConnectError("http/2 stream closed", Code.Internal));
  const { watch, asked } = scripted([[0, reset], [1, closed], [2, 3, 4, 5, 6]]);
  const follower = new GameFollower(watch, "g", { fromVersion: 0, stopWhenOver: true, backoffInitialMs: 0 });
  const versions: bigint[] = [];
  for await (const event of follower) versions.push(event.version);
  assert.deepEqual(versions, [0n, 1n, 2n, 3n, 4n, 5n, 6n]);
  assert.deepEqual(asked, [0n, 1n, 2n]);
  assert.equal(follower.dropped, 2);

  const denied = new ConnectError("no", Code.PermissionDenied, undefined, [
    { desc: rpc.ErrorInfoSchema, value: { reason: "ROLE_FORBIDS", domain: "chess.v1" } },
  ]);
  const { watch: deniedWatch } = scripted([[0, denied]]);
  const seen: bigint[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of new GameFollower(deniedWatch, "g")) seen.push(event.version);
    })(),
    (e: unknown) => e instanceof ChessError && e.code === Code.PermissionDenied && e.reasonName === "ROLE_FORBIDS",
  );
  assert.deepEqual(seen, [0n]);
});

test("gives up after maxAttempts consecutive failed connections", async () => {
  const { watch, asked } = scripted([[0, unavailable()], [unavailable()], [unavailable()], [unavailable()]]);
  const follower = new GameFollower(watch, "g", { backoffInitialMs: 0, maxAttempts: 3 });
  const versions: bigint[] = [];
  await assert.rejects(
    (async () => {
      for await (const event of follower) versions.push(event.version);
    })(),
    (e: unknown) => e instanceof FollowerGaveUp && e.attempts === 3 && e.lastError?.code === Code.Unavailable,
  );
  assert.deepEqual(versions, [0n]);
  assert.deepEqual(asked, [0n, 1n, 1n, 1n]);
});

test("an abort ends the loop cleanly, also while it waits for an event or to reconnect", async () => {
  const waiting = new AbortController();
  const { watch } = scripted([[0, 1, "hang"]]);
  const versions: bigint[] = [];
  for await (const event of new GameFollower(watch, "g", { signal: waiting.signal })) {
    versions.push(event.version);
    if (event.version === 1n) setTimeout(() => waiting.abort(), 20);
  }
  assert.deepEqual(versions, [0n, 1n]);

  const backingOff = new AbortController();
  const { watch: failing } = scripted([[0, unavailable()], [unavailable()]]);
  const started = Date.now();
  for await (const event of new GameFollower(failing, "g", {
    signal: backingOff.signal,
    backoffInitialMs: 60_000,
  })) {
    assert.equal(event.version, 0n);
    setTimeout(() => backingOff.abort(), 20);
  }
  assert.ok(Date.now() - started < 5_000, "the abort cut the backoff short");

  const already = AbortSignal.abort();
  const { watch: never, asked } = scripted([]);
  for await (const _ of new GameFollower(never, "g", { signal: already })) assert.fail("nothing is yielded");
  assert.deepEqual(asked, []);
});

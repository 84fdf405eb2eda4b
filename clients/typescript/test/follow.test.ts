// follow() against the real server: every event exactly once and in order, across a
// kill -9 and restart of the server (same port, same data directory); an abort ends the
// loop cleanly; NOT_FOUND is thrown.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ChessError, Code, Color, ErrorReason, GameStatus, GameView } from "chess-service-client";
import type { ChessClient, Game, GameEvent } from "chess-service-client";
import { startServer } from "./server.js";

const MOVES = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"];

/** Runs a follower in the background, keeping what it yields. */
function collect(iterable: AsyncIterable<GameEvent>) {
  const events: GameEvent[] = [];
  const done = (async () => {
    for await (const event of iterable) events.push(event);
  })();
  done.catch(() => {}); // reported by `done` when awaited
  const waitFor = async (version: bigint, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (events.length > 0 && events[events.length - 1].version >= version) return;
      await Promise.race([done, new Promise((r) => setTimeout(r, 20))]);
    }
    assert.fail(`the follower did not reach version ${version}: ${events.map((e) => e.version)}`);
  };
  return { events, done, waitFor };
}

/** Versions 0..game.version each exactly once, and the moves those events played. */
function assertHistory(events: GameEvent[], game: Game): void {
  assert.deepEqual(
    events.map((e) => e.version),
    Array.from({ length: Number(game.version) + 1 }, (_, i) => BigInt(i)),
  );
  const stack: string[] = [];
  for (const e of events) {
    if (e.kind.case === "movePlayed") stack.push(e.kind.value.move!.uci);
    if (e.kind.case === "moveUndone") assert.equal(stack.pop(), e.kind.value.undone!.uci);
  }
  assert.deepEqual(stack, game.moves);
  assert.equal(events[events.length - 1].state!.fen, game.fen);
  assert.equal(events[events.length - 1].state!.status, game.status);
}

/** Plays a move once the restarted server answers (the client reconnects by itself). */
async function playWhenBack(client: ChessClient, gameId: string, move: string, expectedVersion: bigint) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      return await client.play({ gameId, move, expectedVersion });
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

test("follows a whole game in order, then stops when it is over", async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const client = server.client();
  await client.newGame({ gameId: "f-basic" });
  for (const move of MOVES.slice(0, 4)) await client.play({ gameId: "f-basic", move });
  const follower = client.follow("f-basic", { stopWhenOver: true });
  const c = collect(follower);
  await c.waitFor(4n); // the backlog
  for (const move of MOVES.slice(4)) await client.play({ gameId: "f-basic", move });
  await client.offerDraw({ gameId: "f-basic", color: Color.WHITE });
  await client.respondToDraw({ gameId: "f-basic", color: Color.BLACK, accept: false });
  await client.undo({ gameId: "f-basic" });
  await client.resign({ gameId: "f-basic", color: Color.WHITE });
  await c.done;
  const game = (await client.getGame({ gameId: "f-basic" })).game!;
  assertHistory(c.events, game);
  assert.equal(game.status, GameStatus.RESIGNATION);
  assert.deepEqual([follower.reconnects, follower.resyncs, follower.duplicates], [0, 0, 0]);
  assert.equal(follower.lastVersion, game.version);
});

test("follows a game across a server restart: every version exactly once", async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const client = server.client();
  await client.newGame({ gameId: "f-restart" });
  for (const move of MOVES.slice(0, 3)) await client.play({ gameId: "f-restart", move });
  const follower = client.follow("f-restart", { stopWhenOver: true, backoffInitialMs: 50, backoffMaxMs: 500 });
  const c = collect(follower);
  await c.waitFor(3n);

  await server.restart(); // kill -9, then the same port and data directory
  await playWhenBack(client, "f-restart", MOVES[3], 3n);
  for (const move of MOVES.slice(4)) await client.play({ gameId: "f-restart", move });
  await client.resign({ gameId: "f-restart", color: Color.BLACK });
  await c.done;
  const game = (await client.getGame({ gameId: "f-restart" })).game!;
  assertHistory(c.events, game);
  assert.equal(game.version, BigInt(MOVES.length + 1));
  assert.ok(follower.reconnects >= 1, "the follower reconnected");
  assert.ok(follower.dropped >= 1, "the restart dropped the stream");
  assert.equal(follower.duplicates, 0);
});

test("an AbortSignal ends a follower that waits for the next event: the loop just finishes", async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const client = server.client();
  await client.newGame({ gameId: "f-abort" });
  await client.play({ gameId: "f-abort", move: "d4" });
  const controller = new AbortController();
  const versions: bigint[] = [];
  for await (const event of client.follow("f-abort", { signal: controller.signal })) {
    versions.push(event.version);
    if (event.version === 1n) setTimeout(() => controller.abort(), 50);
  }
  assert.deepEqual(versions, [0n, 1n]);
  // Leaving the loop with break also ends the stream (and the server serves on).
  for await (const event of client.follow("f-abort", { fromVersion: 1n })) {
    assert.equal(event.version, 1n);
    break;
  }
  assert.equal((await client.getGame({ gameId: "f-abort" })).game!.version, 1n);
});

test("following a game that does not exist throws NOT_FOUND", async (t) => {
  const server = await startServer();
  t.after(() => server.stop());
  const client = server.client();
  await assert.rejects(
    (async () => {
      for await (const _ of client.follow("f-nobody")) assert.fail("no event");
    })(),
    (e: unknown) => e instanceof ChessError && e.code === Code.NotFound && e.reason === ErrorReason.GAME_NOT_FOUND,
  );
});

test("a spectator that fell behind is told to resync, and follow() resumes without a gap", async (t) => {
  const server = await startServer({ args: ["--watch-buffer", "4"] });
  t.after(() => server.stop());
  const player = server.client();
  // A small HTTP/2 window, so that the transport cannot hold much for the slow reader.
  const spectator = server.client({ nodeOptions: { settings: { initialWindowSize: 1024 } } });
  await player.newGame({ gameId: "f-resync" });
  const follower = spectator.follow("f-resync", { stopWhenOver: true, backoffInitialMs: 10 });
  const events = follower[Symbol.asyncIterator]();
  const got: GameEvent[] = [];
  const first = await events.next(); // version 0; then it stops reading while the game goes on
  assert.ok(!first.done);
  got.push(first.value);
  const pairs = 150;
  for (let i = 0; i < pairs; i++) {
    await player.play({ gameId: "f-resync", move: "Nf3", view: GameView.BASIC });
    await player.undo({ gameId: "f-resync", view: GameView.BASIC });
  }
  await player.play({ gameId: "f-resync", move: "e4" });
  await player.resign({ gameId: "f-resync", color: Color.WHITE });
  for (let next = await events.next(); !next.done; next = await events.next()) got.push(next.value);
  const game = (await player.getGame({ gameId: "f-resync" })).game!;
  assertHistory(got, game);
  assert.equal(game.version, BigInt(2 * pairs + 2));
  assert.ok(follower.resyncs >= 1, "the slow spectator was told to resync");
  assert.ok(follower.reconnects >= follower.resyncs);
  assert.equal(follower.duplicates, 0);
});

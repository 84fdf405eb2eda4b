// The whole game flow against the real server over gRPC: NewGame under the caller's id
// (idempotent), moves, LegalMoves, GetGame, a mate; the errors a player meets (NOT_FOUND,
// ILLEGAL_MOVE, a stale expected_version, GAME_OVER); an exact retry; a flag fall; the
// default and per-call deadlines.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import {
  ChessError,
  Code,
  Color,
  ErrorReason,
  GameStatus,
  GameView,
} from "chess-service-client";
import type { ChessClient } from "chess-service-client";
import { Server, startServer } from "./server.js";

let server: Server;
let client: ChessClient;

before(async () => {
  server = await startServer();
  client = server.client();
});
after(() => server.stop());

/** The ChessError a call threw. */
async function failure(call: Promise<unknown>): Promise<ChessError> {
  try {
    await call;
  } catch (e) {
    assert.ok(e instanceof ChessError, `a ChessError, not ${String(e)}`);
    return e;
  }
  assert.fail("the call succeeded");
}

test("a whole game: NewGame with a game_id, moves, LegalMoves, GetGame, checkmate", async () => {
  const created = await client.newGame({ gameId: "ts-flow", tags: { White: "Ann", Black: "Bob" } });
  const game = created.game!;
  assert.equal(game.gameId, "ts-flow");
  assert.equal(game.version, 0n);
  assert.equal(game.sideToMove, Color.WHITE);
  assert.equal(game.status, GameStatus.IN_PROGRESS);
  assert.equal(game.tags.White, "Ann");

  // The same id and start again: the existing game (NewGame under an id is retry-safe).
  const again = await client.newGame({ gameId: "ts-flow" });
  assert.equal(again.game!.version, 0n);

  const start = await client.legalMoves({ position: { case: "gameId", value: "ts-flow" } });
  assert.equal(start.moves.length, 20);
  assert.ok(start.moves.some((m) => m.uci === "e2e4" && m.san === "e4"));
  assert.equal(start.status, GameStatus.IN_PROGRESS);
  assert.equal(start.version, 0n, "the version to send as expectedVersion");

  // Fool's mate, each move sent with the version it was decided on.
  let version = game.version;
  for (const move of ["f3", "e5", "g4"]) {
    const played = await client.play({ gameId: "ts-flow", move, expectedVersion: version });
    assert.equal(played.game!.version, version + 1n);
    version = played.game!.version;
  }
  const mate = await client.play({ gameId: "ts-flow", move: "Qh4", expectedVersion: version });
  assert.equal(mate.move!.san, "Qh4#");
  assert.equal(mate.move!.checkmate, true);
  assert.equal(mate.game!.status, GameStatus.CHECKMATE);
  assert.equal(mate.game!.winner, Color.BLACK);

  const read = (await client.getGame({ gameId: "ts-flow" })).game!;
  assert.deepEqual(read.moves, ["f2f3", "e7e5", "g2g4", "d8h4"]);
  assert.deepEqual(read.sanMoves, ["f3", "e5", "g4", "Qh4#"]);
  assert.equal(read.ply, 4);
  assert.equal(read.version, 4n);
  assert.equal(read.status, GameStatus.CHECKMATE);
  assert.equal(read.inCheck, true);
  assert.match(read.pgn, /\[White "Ann"\][\s\S]*1\. f3 e5 2\. g4 Qh4# 0-1/);
  const basic = (await client.getGame({ gameId: "ts-flow", view: GameView.BASIC })).game!;
  assert.deepEqual(basic.moves, []);
  assert.equal(basic.fen, read.fen);

  const over = await client.legalMoves({ position: { case: "gameId", value: "ts-flow" } });
  assert.equal(over.moves.length, 0);
  assert.equal(over.status, GameStatus.CHECKMATE);
  assert.equal(over.winner, Color.BLACK);

  const e = await failure(client.play({ gameId: "ts-flow", move: "e4" }));
  assert.equal(e.code, Code.FailedPrecondition);
  assert.equal(e.reason, ErrorReason.GAME_OVER);
  assert.deepEqual(e.metadata, { game_id: "ts-flow", status: "GAME_STATUS_CHECKMATE" });
});

test("NOT_FOUND carries GAME_NOT_FOUND, the game_id and a ResourceInfo", async () => {
  const e = await failure(client.getGame({ gameId: "ts-nobody" }));
  assert.equal(e.code, Code.NotFound);
  assert.equal(e.reason, ErrorReason.GAME_NOT_FOUND);
  assert.equal(e.reasonName, "GAME_NOT_FOUND");
  assert.equal(e.domain, "chess.v1");
  assert.equal(e.metadata.game_id, "ts-nobody");
  assert.ok(e.resourceInfo, "a ResourceInfo is sent with NOT_FOUND");
  assert.match(e.resourceInfo.resourceName, /ts-nobody/);
  assert.match(e.message, /^NotFound GAME_NOT_FOUND: /);
});

test("ILLEGAL_MOVE: FAILED_PRECONDITION with its reason, message and metadata", async () => {
  await client.newGame({ gameId: "ts-illegal" });
  const e = await failure(client.play({ gameId: "ts-illegal", move: "e2e5" }));
  assert.equal(e.code, Code.FailedPrecondition);
  assert.equal(e.reason, ErrorReason.ILLEGAL_MOVE);
  assert.match(e.rawMessage, /illegal move e2e5/);
  // Every error about a stored game names it, and a refused move names the move.
  assert.ok(
    isDeepStrictEqual({ ...e.metadata }, { game_id: "ts-illegal", move: "e2e5" }),
    `ILLEGAL_MOVE metadata ${JSON.stringify(e.metadata)}`,
  );
  // Nothing was played.
  assert.equal((await client.getGame({ gameId: "ts-illegal" })).game!.version, 0n);

  const text = await failure(client.play({ gameId: "ts-illegal", move: "not-a-move" }));
  assert.equal(text.code, Code.InvalidArgument);
  assert.equal(text.reason, ErrorReason.INVALID_MOVE_TEXT);
  assert.equal(text.badRequest?.fieldViolations[0]?.field, "move");
});

test("a stale expected_version is ABORTED, VERSION_MISMATCH, with both versions", async () => {
  await client.newGame({ gameId: "ts-stale" });
  await client.play({ gameId: "ts-stale", move: "e4", expectedVersion: 0n });
  const e = await failure(client.play({ gameId: "ts-stale", move: "d5", expectedVersion: 0n }));
  assert.equal(e.code, Code.Aborted);
  assert.equal(e.reason, ErrorReason.VERSION_MISMATCH);
  assert.deepEqual(e.metadata, { game_id: "ts-stale", current_version: "1", expected_version: "0" });
  const ply = await failure(client.play({ gameId: "ts-stale", move: "d5", expectedPly: 0 }));
  assert.equal(ply.reason, ErrorReason.PLY_MISMATCH);
  assert.equal(ply.metadata.current_ply, "1");
});

test("an exact retry (the same request with the same expected_version) applies nothing twice", async () => {
  const v0 = (await client.newGame({ gameId: "ts-retry" })).game!.version;
  const request = { gameId: "ts-retry", move: "e4", expectedVersion: v0 };
  const first = await client.play(request);
  // The reply was lost: the very same request again succeeds, with the game as it stands.
  const retry = await client.play(request);
  assert.equal(first.game!.version, v0 + 1n);
  assert.equal(retry.game!.version, v0 + 1n);
  assert.deepEqual(retry.game!.moves, ["e2e4"]);
  assert.equal(retry.move!.uci, "e2e4");
  // Another move decided on the same version is not a retry.
  const other = await failure(client.play({ gameId: "ts-retry", move: "d4", expectedVersion: v0 }));
  assert.equal(other.reason, ErrorReason.VERSION_MISMATCH);

  const v1 = retry.game!.version;
  const resigned = await client.resign({ gameId: "ts-retry", color: Color.BLACK, expectedVersion: v1 });
  const again = await client.resign({ gameId: "ts-retry", color: Color.BLACK, expectedVersion: v1 });
  assert.equal(resigned.game!.status, GameStatus.RESIGNATION);
  assert.equal(again.game!.version, resigned.game!.version);
  assert.equal(again.game!.winner, Color.WHITE);
  // NewGame under the same id with another start is not a retry.
  const taken = await failure(client.newGame({ gameId: "ts-retry", fen: "8/8/8/8/8/8/8/K6k w - - 0 1" }));
  assert.equal(taken.code, Code.AlreadyExists);
  assert.equal(taken.reason, ErrorReason.GAME_ALREADY_EXISTS);
});

test("a flag fall: a tiny clock runs out and the game is lost on time", async () => {
  const created = await client.newGame({ gameId: "ts-flag", timeControl: { initialMs: 300n, incrementMs: 0n } });
  assert.equal(created.game!.clock!.running, Color.WHITE);
  await new Promise((r) => setTimeout(r, 600));
  const game = (await client.getGame({ gameId: "ts-flag" })).game!;
  assert.equal(game.status, GameStatus.OUT_OF_TIME);
  assert.equal(game.winner, Color.BLACK);
  assert.equal(game.clock!.whiteRemainingMs, 0n);
  assert.equal(game.clock!.running, Color.UNSPECIFIED);
  const late = await failure(client.play({ gameId: "ts-flag", move: "e4" }));
  assert.equal(late.reason, ErrorReason.GAME_OVER);
  assert.equal(late.metadata.status, "GAME_STATUS_OUT_OF_TIME");
});

test("deadlines: a unary call gets the client's default, and a call may set its own", async () => {
  const e = await failure(client.perft({ depth: 7 }, { timeoutMs: 200 }));
  assert.equal(e.code, Code.DeadlineExceeded);
  const hurried = server.client({ timeoutMs: 200 });
  const d = await failure(hurried.perft({ depth: 7 }));
  assert.equal(d.code, Code.DeadlineExceeded);
  // The cancelled perft holds this caller's perft slot until it stops, within 100 ms.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await hurried.perft({ depth: 3 })).nodes, 8902n);
});

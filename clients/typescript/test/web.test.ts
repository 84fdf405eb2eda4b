// gRPC-Web against the server's --grpc-web-listen port: the Node client with protocol
// "grpc-web" over HTTP/1.1 and HTTP/2, and the browser entry point (fetch, as a page
// calls it), with errors and their details, and follow(). The browser entry imports no
// Node module, so a bundler can pack it for a page.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import * as web from "chess-service-client/web";
import { ChessError, Code, Color, ErrorReason, GameStatus } from "chess-service-client";
import type { ChessClient } from "chess-service-client";
import { Server, startServer } from "./server.js";

let server: Server;

before(async () => {
  server = await startServer({ grpcWeb: true });
});
after(() => server.stop());

async function playAGame(client: ChessClient, gameId: string) {
  const game = (await client.newGame({ gameId })).game!;
  assert.equal(game.version, 0n);
  let version = 0n;
  for (const move of ["f3", "e5", "g4", "Qh4"]) {
    version = (await client.play({ gameId, move, expectedVersion: version })).game!.version;
  }
  const over = (await client.getGame({ gameId })).game!;
  assert.equal(over.status, GameStatus.CHECKMATE);
  assert.equal(over.winner, Color.BLACK);
  const legal = await client.legalMoves({ position: { case: "fen", value: over.fen } });
  assert.equal(legal.status, GameStatus.CHECKMATE);

  await assert.rejects(client.play({ gameId, move: "e4" }), (e: unknown) => {
    assert.ok(e instanceof ChessError);
    assert.equal(e.code, Code.FailedPrecondition);
    assert.equal(e.reason, ErrorReason.GAME_OVER);
    assert.equal(e.metadata.game_id, gameId);
    return true;
  });
  await assert.rejects(client.getGame({ gameId: `${gameId}-nobody` }), (e: unknown) => {
    assert.ok(e instanceof ChessError);
    assert.equal(e.code, Code.NotFound);
    assert.equal(e.reason, ErrorReason.GAME_NOT_FOUND);
    assert.equal(e.metadata.game_id, `${gameId}-nobody`);
    return true;
  });
  const versions: bigint[] = [];
  for await (const event of client.follow(gameId, { stopWhenOver: true })) versions.push(event.version);
  assert.deepEqual(versions, [0n, 1n, 2n, 3n, 4n]);
}

test("gRPC-Web over HTTP/1.1 (Node client)", async () => {
  await playAGame(server.client({ protocol: "grpc-web", httpVersion: "1.1" }), "web-h1");
});

test("gRPC-Web over HTTP/2 (Node client)", async () => {
  await playAGame(server.client({ protocol: "grpc-web", httpVersion: "2" }), "web-h2");
});

test("the browser entry point speaks gRPC-Web over fetch", async () => {
  const client = web.createChessClient({ baseUrl: server.webUrl });
  await playAGame(client, "web-fetch");
  assert.throws(() => web.createChessClient({ baseUrl: server.baseUrl, protocol: "grpc" }), TypeError);
});

test("gRPC-Web over HTTP/1.1 sent to the main port fails, typed, and changes nothing", async () => {
  // The main port speaks only HTTP/2 and closes anything else at once (docs/api.md).
  const wrong = server.client({ protocol: "grpc-web", baseUrl: server.baseUrl, httpVersion: "1.1" });
  await assert.rejects(wrong.newGame({ gameId: "web-wrong-port" }), (e: unknown) => {
    assert.ok(e instanceof ChessError, `a ChessError, not ${String(e)}`);
    assert.equal(e.reasonName, "", "no status from the server: the connection was closed");
    return true;
  });
  await assert.rejects(
    server.client().getGame({ gameId: "web-wrong-port" }),
    (e: unknown) => e instanceof ChessError && e.reason === ErrorReason.GAME_NOT_FOUND,
  );
});

test("the browser entry imports no Node module (it bundles for a page)", () => {
  const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']/g)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec));
      else bare.add(spec);
    }
  };
  visit(join(dist, "index.js"));
  assert.ok(seen.size > 5, `followed the imports: ${[...seen]}`);
  assert.ok(!seen.has(join(dist, "node.js")));
  const nodeOnly = [...bare].filter((s) => s.startsWith("node:") || s === "@connectrpc/connect-node" || !s.startsWith("@"));
  assert.deepEqual(nodeOnly, [], `browser entry imports: ${[...bare]}`);
  assert.ok(bare.has("@connectrpc/connect-web"));
});

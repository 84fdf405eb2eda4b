// `npm run bench` (BENCHMARKS.md, "Clients and the game page"): on one release server
// (`$CHESS_SERVER`) in one run,
//  - the Play round trip, one caller, one call at a time, each on a fresh game (made
//    before the clock starts): this TypeScript client over gRPC (HTTP/2) and over
//    gRPC-Web (HTTP/2 and HTTP/1.1), the Python client (`$PYTHON`, a Python with
//    chess_service_client installed; default .ci/pyclient-venv/bin/python) and grpcurl
//    (`$GRPCURL`, one process per call, as a person or a script runs it; with the proto
//    files, no reflection);
//  - the game page's time to first board: headless chromium opens `/?game=ID` of a
//    33-ply game (the Opera game) in a new tab, N times; from navigation start to the
//    board drawn (the page records performance.now() then), as the median and p90.
// Prints one line per measurement and a Markdown table. PLAYS (default 300) and LOADS
// (default 30) set the sample sizes.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createChessClient } from "chess-service-client";
import { launchChromium, noChromium } from "../dist-test/browser.js";
import { startServer } from "../dist-test/server.js";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const root = resolve(pkg, "..", "..");
const PLAYS = Number(process.env.PLAYS ?? 300);
const LOADS = Number(process.env.LOADS ?? 30);
const PYTHON = process.env.PYTHON ?? join(root, ".ci", "pyclient-venv", "bin", "python");
const GRPCURL = process.env.GRPCURL ?? "grpcurl";

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const rows = [];
function record(what, samples) {
  const row = { what, n: samples.length, median: quantile(samples, 0.5), p90: quantile(samples, 0.9), p99: quantile(samples, 0.99) };
  rows.push(row);
  console.log(`${what}: n=${row.n} median ${row.median.toFixed(3)} ms, p90 ${row.p90.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms`);
}

const server = await startServer({ grpcWeb: true });
try {
  const host = `127.0.0.1:${server.port}`;
  // Warm the server (its first games, its allocator) before anything is timed.
  const warm = server.client();
  for (let i = 0; i < 50; i++) {
    await warm.newGame({ gameId: `warm-${i}` });
    await warm.play({ gameId: `warm-${i}`, move: "e4", expectedVersion: 0n });
  }

  for (const [label, options] of [
    ["TypeScript client, gRPC (HTTP/2)", { protocol: "grpc" }],
    ["TypeScript client, gRPC-Web over HTTP/2", { protocol: "grpc-web", httpVersion: "2" }],
    ["TypeScript client, gRPC-Web over HTTP/1.1", { protocol: "grpc-web", httpVersion: "1.1" }],
  ]) {
    const client = createChessClient({ baseUrl: options.protocol === "grpc" ? server.baseUrl : server.webUrl, ...options });
    const samples = [];
    const tag = `ts-${options.protocol}-${options.httpVersion ?? "2"}`;
    for (let i = 0; i < PLAYS + 20; i++) {
      const gameId = `${tag}-${i}`;
      await client.newGame({ gameId });
      const t = performance.now();
      await client.play({ gameId, move: "e4", expectedVersion: 0n });
      if (i >= 20) samples.push(performance.now() - t); // the first 20 warm the connection
    }
    client.close();
    record(label, samples);
  }

  if (existsSync(PYTHON)) {
    const code = `
import json, sys, time
from chess_service_client import ChessClient
target, n = sys.argv[1], int(sys.argv[2])
out = []
with ChessClient.connect(target) as c:
    for i in range(n + 20):
        gid = "py-%d" % i
        c.new_game(game_id=gid)
        t = time.perf_counter()
        c.play(gid, "e4", expected_version=0)
        if i >= 20:
            out.append((time.perf_counter() - t) * 1000)
print(json.dumps(out))
`;
    const run = spawnSync(PYTHON, ["-c", code, host, String(PLAYS)], { encoding: "utf8" });
    if (run.status !== 0) throw new Error(`the Python client failed: ${run.stderr}`);
    record("Python client (grpcio)", JSON.parse(run.stdout));
  } else {
    console.log(`no Python client: ${PYTHON} is missing (set $PYTHON)`);
  }

  const proto = ["-import-path", join(root, "proto"), "-proto", "chess/v1/chess.proto"];
  const grpcurl = (method, data) =>
    spawnSync(GRPCURL, ["-plaintext", ...proto, "-d", JSON.stringify(data), host, `chess.v1.ChessService/${method}`], {
      encoding: "utf8",
    });
  if (grpcurl("GetGame", { game_id: "warm-0" }).status === 0) {
    const samples = [];
    const n = Math.min(PLAYS, 100);
    for (let i = 0; i < n; i++) {
      const gameId = `grpcurl-${i}`;
      grpcurl("NewGame", { game_id: gameId });
      const t = performance.now();
      const run = grpcurl("Play", { game_id: gameId, move: "e4", expected_version: 0 });
      samples.push(performance.now() - t);
      if (run.status !== 0) throw new Error(`grpcurl failed: ${run.stderr}`);
    }
    record("grpcurl (a process per call)", samples);
  } else {
    console.log(`no grpcurl: ${GRPCURL} did not run (set $GRPCURL)`);
  }

  if (noChromium()) {
    console.log("no chromium: the page's time to first board was not measured");
  } else {
    const client = server.client();
    const gameId = "page-bench";
    await client.newGame({ gameId });
    // Morphy's Opera game, 33 plies to mate.
    const moves = ("e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5 " +
      "Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#").split(" ");
    let version = 0n;
    for (const move of moves) version = (await client.play({ gameId, move, expectedVersion: version })).game.version;
    const browser = await launchChromium();
    try {
      const samples = [];
      for (let i = 0; i < LOADS + 3; i++) {
        const page = await browser.newPage();
        await page.goto(`${server.webUrl}/?game=${gameId}`);
        await page.waitForSelector("#board svg");
        const ms = Number(await page.evaluate(() => document.body.dataset.boardDrawnMs));
        await page.close();
        if (i >= 3) samples.push(ms); // the first loads start the browser's own caches
      }
      record(`page: navigation start to board drawn (a ${moves.length}-ply game)`, samples);
    } finally {
      await browser.close();
    }
  }
} finally {
  await server.stop();
}

console.log("\n| What | n | median | p90 | p99 |\n| --- | --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.what} | ${r.n} | ${r.median.toFixed(2)} ms | ${r.p90.toFixed(2)} ms | ${r.p99.toFixed(2)} ms |`);

// `npm run bench-instructions` (builds the package and the test helpers first;
// BENCHMARKS.md, "Clients and the game page"): the server's instructions per Play over
// gRPC (HTTP/2) and over gRPC-Web (HTTP/2 and HTTP/1.1), in one run of one server under
// callgrind, as benches/server_instructions_ab.sh measures them: the counters are zeroed
// before and dumped after each load, and a load of one call (connecting, the first game)
// is taken off. One caller of this TypeScript client, each Play on a fresh game made
// before the counters are zeroed. PLAYS (default 300), ROUNDS (default 2). Needs valgrind.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createChessClient } from "chess-service-client";
import { serverBinary } from "../dist-test/server.js";

const PLAYS = Number(process.env.PLAYS ?? 300);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const work = mkdtempSync(join(tmpdir(), "chess-instructions-"));
const port = 20000 + Math.floor(Math.random() * 20000);
const webPort = port + 1;
const server = spawn(
  "valgrind",
  ["--tool=callgrind", `--callgrind-out-file=${join(work, "server.%p")}`, serverBinary(),
    "--listen", `127.0.0.1:${port}`, "--grpc-web-listen", `127.0.0.1:${webPort}`, "--data-dir", join(work, "data")],
  { stdio: ["ignore", "ignore", "ignore"] },
);

function total() {
  // The newest dump of this server's process.
  const dumps = readdirSync(work)
    .filter((n) => n.startsWith(`server.${server.pid}`))
    .map((n) => join(work, n))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const text = readFileSync(dumps[0], "utf8");
  const m = /^(?:summary|totals):\s+(\d+)/m.exec(text);
  if (!m) throw new Error(`no totals in ${dumps[0]}`);
  return Number(m[1]);
}

async function counted(fn) {
  spawnSync("callgrind_control", ["-z", String(server.pid)]);
  await fn();
  spawnSync("callgrind_control", ["-d", String(server.pid)]);
  await new Promise((r) => setTimeout(r, 1000));
  return total();
}

try {
  const probe = createChessClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2000 });
  for (let i = 0; ; i++) {
    try {
      await probe.getGame({ gameId: "nothing" });
      break;
    } catch (e) {
      if (e?.reasonName === "GAME_NOT_FOUND") break;
      if (i > 300) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  probe.close();
  const kinds = [
    ["gRPC (HTTP/2)", { baseUrl: `http://127.0.0.1:${port}`, protocol: "grpc" }],
    ["gRPC-Web over HTTP/2", { baseUrl: `http://127.0.0.1:${webPort}`, protocol: "grpc-web", httpVersion: "2" }],
    ["gRPC-Web over HTTP/1.1", { baseUrl: `http://127.0.0.1:${webPort}`, protocol: "grpc-web", httpVersion: "1.1" }],
  ];
  const results = new Map(kinds.map(([k]) => [k, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [label, options] of kinds) {
      const tag = `${label.replace(/\W+/g, "-")}-${round}`;
      const maker = createChessClient({ ...options, timeoutMs: 60_000 });
      for (let i = 0; i <= PLAYS; i++) await maker.newGame({ gameId: `${tag}-${i}` });
      maker.close();
      // Each load on a fresh connection, so that both pay for connecting once.
      const load = (from, to) => async () => {
        const client = createChessClient({ ...options, timeoutMs: 60_000 });
        for (let i = from; i < to; i++) await client.play({ gameId: `${tag}-${i}`, move: "e4", expectedVersion: 0n });
        client.close();
      };
      const setup = await counted(load(0, 1));
      const long = await counted(load(1, PLAYS + 1));
      const perPlay = Math.round((long - setup) / (PLAYS - 1));
      results.get(label).push(perPlay);
      console.log(`round ${round} ${label}: ${perPlay} instructions per Play (${PLAYS} plays ${long}, one play ${setup})`);
    }
  }
  const grpc = Math.min(...results.get("gRPC (HTTP/2)"));
  for (const [label, xs] of results) {
    const best = Math.min(...xs);
    console.log(`${label}: ${best} instructions per Play (lowest of ${xs.length} rounds), ${(best / grpc).toFixed(2)}x gRPC`);
  }
} finally {
  server.kill("SIGTERM");
  await new Promise((r) => server.once("exit", r));
  rmSync(work, { recursive: true, force: true });
}

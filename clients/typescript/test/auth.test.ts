// Bearer tokens (docs/security.md): a server with --auth-tokens; the client sends
// `authorization: Bearer TOKEN` on every call, over gRPC and gRPC-Web, and a missing,
// unknown or underprivileged token is a typed ChessError.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ChessError, Code, ErrorReason } from "chess-service-client";
import { Server, makeCertificates, startServer, tempDir } from "./server.js";

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");
let server: Server;

before(async () => {
  const tokens = join(tempDir("tokens-"), "tokens");
  writeFileSync(
    tokens,
    `# NAME ROLE SHA256HEX\nreporting read ${sha256("reader-token")}\nmatchmaker play ${sha256("player-token")}\n`,
  );
  server = await startServer({ args: ["--auth-tokens", tokens], grpcWeb: true });
});
after(() => server.stop());

function isError(code: Code, reason: ErrorReason) {
  return (e: unknown) => {
    assert.ok(e instanceof ChessError, `a ChessError, not ${String(e)}`);
    assert.equal(e.code, code);
    assert.equal(e.reason, reason);
    return true;
  };
}

for (const protocol of ["grpc", "grpc-web"] as const) {
  test(`tokens over ${protocol}: the right one works, a wrong one is UNAUTHENTICATED`, async () => {
    const gameId = `auth-${protocol}`;
    const player = server.client({ protocol, token: "player-token" });
    const game = (await player.newGame({ gameId })).game!;
    assert.equal((await player.play({ gameId, move: "e4" })).game!.version, game.version + 1n);

    const stranger = server.client({ protocol, token: "not-a-token" });
    await assert.rejects(stranger.getGame({ gameId }), isError(Code.Unauthenticated, ErrorReason.TOKEN_UNKNOWN));
    const anonymous = server.client({ protocol });
    await assert.rejects(anonymous.newGame({}), isError(Code.Unauthenticated, ErrorReason.TOKEN_MISSING));

    const reader = server.client({ protocol, token: "reader-token" });
    assert.equal((await reader.getGame({ gameId })).game!.ply, 1);
    await assert.rejects(reader.play({ gameId, move: "e5" }), (e: unknown) => {
      isError(Code.PermissionDenied, ErrorReason.ROLE_FORBIDS)(e);
      assert.deepEqual((e as ChessError).metadata, { role: "read", needed: "play" });
      return true;
    });
    // follow() sends the token too, and a wrong one is thrown, not retried.
    const versions: bigint[] = [];
    const controller = new AbortController();
    for await (const event of reader.follow(gameId, { signal: controller.signal })) {
      versions.push(event.version);
      if (event.version === 1n) controller.abort();
    }
    assert.deepEqual(versions, [0n, 1n]);
    await assert.rejects(
      (async () => {
        for await (const _ of stranger.follow(gameId)) assert.fail("no event");
      })(),
      isError(Code.Unauthenticated, ErrorReason.TOKEN_UNKNOWN),
    );
  });
}

test("gRPC-Web over HTTP/1.1: a refused token is UNAUTHENTICATED every time, never a broken pipe", async () => {
  // connect-node sends the body after the headers; the server reads it before it
  // answers, so the refusal arrives as a status (it was INTERNAL `write EPIPE` in 35
  // calls of 40 when the server answered first and closed the connection).
  const stranger = server.client({ protocol: "grpc-web", httpVersion: "1.1", token: "not-a-token" });
  const anonymous = server.client({ protocol: "grpc-web", httpVersion: "1.1" });
  for (let i = 0; i < 20; i++) {
    await assert.rejects(stranger.getGame({ gameId: "h1-refused" }), isError(Code.Unauthenticated, ErrorReason.TOKEN_UNKNOWN));
    await assert.rejects(anonymous.newGame({ gameId: `h1-refused-${i}` }), isError(Code.Unauthenticated, ErrorReason.TOKEN_MISSING));
  }
});

test("TLS: gRPC and gRPC-Web (HTTP/2 and HTTP/1.1) over https with the server's CA, and the token", async (t) => {
  // A CA and a certificate for localhost, made with openssl as tests/grpcurl_walkthrough.sh does.
  const { dir, ca: caPath, cert, key } = makeCertificates();
  const tokens = join(dir, "tokens");
  writeFileSync(tokens, `matchmaker play ${sha256("player-token")}\n`);
  const secure = await startServer({
    args: ["--auth-tokens", tokens],
    grpcWeb: true,
    tls: { cert, key },
  });
  t.after(() => secure.stop());
  const ca = readFileSync(caPath);
  for (const [protocol, httpVersion] of [["grpc", "2"], ["grpc-web", "2"], ["grpc-web", "1.1"]] as const) {
    const gameId = `tls-${protocol}-${httpVersion}`;
    const client = secure.client({ protocol, httpVersion, token: "player-token", nodeOptions: { ca } });
    assert.equal((await client.newGame({ gameId })).game!.gameId, gameId);
    assert.equal((await client.play({ gameId, move: "e4" })).game!.ply, 1);
  }
  // Without the CA the certificate is not trusted: the call fails, typed.
  const untrusting = secure.client({ token: "player-token" });
  await assert.rejects(untrusting.getGame({ gameId: "tls-grpc-2" }), (e: unknown) => e instanceof ChessError);
});

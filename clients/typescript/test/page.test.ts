// The game page (`/` of the gRPC-Web listener, src/server/page.rs) in a real browser:
// headless chromium opens `/?game=ID`, a game is played over gRPC from Node while the
// page watches, and each move (SAN) and the final status must be in the DOM within 1 s
// of its Play returning; the board shows the last move and the check, the clocks run,
// the history steps back and forth, and a screenshot is taken. Again over TLS with a
// token typed into the page. Without chromium the tests skip loudly, or fail under
// CHESS_REQUIRE_CHROMIUM=1 (CI).
import assert from "node:assert/strict";
import { execSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { Color, GameStatus } from "chess-service-client";
import type { ChessClient } from "chess-service-client";
import type { Page } from "puppeteer-core";
import { launchChromium, noChromium } from "./browser.js";
import { makeCertificates, startServer, tempDir } from "./server.js";

const sha256 = (token: string) => createHash("sha256").update(token).digest("hex");
const SCHOLARS_MATE = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"];
/** How soon after Play returns the page must show the move. */
const LIMIT_MS = 1000;

/** The text of the SAN the page shows for `ply`, or null. */
function sanAt(page: Page, ply: number) {
  return page.$eval(`#moves [data-ply="${ply}"]`, (n) => n.textContent).catch(() => null);
}

async function boardPly(page: Page): Promise<number> {
  return Number(await page.$eval("#board svg", (n) => n.getAttribute("data-ply")));
}

interface Watched {
  firstBoardMs: number;
  lagsMs: number[];
  screenshotBytes: number;
}

/** Opens the page on a new timed game, plays Scholar's mate over gRPC, checks what the page shows. */
async function watchAGame(
  page: Page,
  webUrl: string,
  player: ChessClient,
  gameId: string,
  token?: string,
): Promise<Watched> {
  const created = (await player.newGame({ gameId, timeControl: { initialMs: 600_000n, incrementMs: 2_000n } })).game!;
  assert.equal(created.status, GameStatus.IN_PROGRESS);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });

  const response = await page.goto(`${webUrl}/?game=${encodeURIComponent(gameId)}`, { waitUntil: "load" });
  assert.ok(response, "an answer to the page");
  assert.equal(response.status(), 200);
  assert.match(response.headers()["content-type"] ?? "", /^text\/html/);
  assert.match(response.headers()["content-security-policy"] ?? "", /script-src 'self'/);
  assert.equal(response.headers()["x-content-type-options"], "nosniff");

  if (token !== undefined) {
    // The server wants a token: the page asks for one, and keeps it in the tab, not the URL.
    await page.waitForFunction(() => /token/.test(document.getElementById("message")?.textContent ?? ""), { timeout: 10_000 });
    await page.type("#token", token);
    await page.keyboard.press("Enter");
  }
  await page.waitForSelector("#board svg", { timeout: 10_000 });
  const firstBoardMs = Number(await page.evaluate(() => document.body.dataset.boardDrawnMs));
  await page.waitForFunction(() => document.body.dataset.live === "live", { timeout: 10_000 });
  if (token !== undefined) {
    assert.ok(!page.url().includes(token), "the token is not in the URL");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("chess-service-token")), token);
  }

  // White's clock runs from the creation: it counts down on the page.
  const before = await page.$eval("#clock-bottom", (n) => n.textContent);
  await new Promise((r) => setTimeout(r, 1100));
  const later = await page.$eval("#clock-bottom", (n) => n.textContent);
  assert.match(before ?? "", /^white \d+:\d\d$/);
  assert.notEqual(later, before, "white's clock counts down");
  assert.match((await page.$eval("#clock-bottom", (n) => n.className)) ?? "", /running/);

  const lagsMs: number[] = [];
  let version = created.version;
  let playedAt = 0;
  for (const [i, san] of SCHOLARS_MATE.entries()) {
    const ply = i + 1;
    version = (await player.play({ gameId, move: san, expectedVersion: version })).game!.version;
    playedAt = performance.now();
    await page
      .waitForFunction(
        (p: number, s: string) => document.querySelector(`#moves [data-ply="${p}"]`)?.textContent === s,
        { timeout: LIMIT_MS, polling: "mutation" },
        ply,
        san,
      )
      .catch(async () => assert.fail(`ply ${ply} (${san}) not shown within ${LIMIT_MS} ms: ${await sanAt(page, ply)}`));
    const lag = performance.now() - playedAt;
    lagsMs.push(lag);
    assert.ok(lag < LIMIT_MS, `ply ${ply} shown ${lag} ms after Play returned`);
  }
  await page
    .waitForFunction(() => document.getElementById("status")?.textContent === "checkmate: white wins (1-0)", {
      timeout: LIMIT_MS,
      polling: "mutation",
    })
    .catch(async () => assert.fail(`the status after mate: ${await page.$eval("#status", (n) => n.textContent)}`));
  const statusLag = performance.now() - playedAt;
  assert.ok(statusLag < LIMIT_MS, `the final status shown ${statusLag} ms after the last Play returned`);
  assert.equal((await player.getGame({ gameId })).game!.winner, Color.WHITE);

  // The last move and the check are marked on the board.
  assert.equal(await boardPly(page), 7);
  const last = await page.$$eval("#board rect.last", (rs) => rs.map((r) => r.getAttribute("data-square")).sort());
  assert.deepEqual(last, ["f7", "h5"]);
  assert.deepEqual(await page.$$eval("#board rect.check", (rs) => rs.map((r) => r.getAttribute("data-square"))), ["e8"]);
  assert.equal(await page.$eval('#board [data-square="f7"].pc', (n) => n.getAttribute("data-piece")), "Q");
  // The opening, read again after the moves (the events do not carry it).
  await page
    .waitForFunction(() => /Opening[A-E]\d\d /.test(document.getElementById("facts")?.textContent ?? ""), { timeout: 2000 })
    .catch(async () => assert.fail(`no opening: ${await page.$eval("#facts", (n) => n.textContent)}`));
  // Clocks stop with the game.
  assert.doesNotMatch((await page.$eval("#clock-top", (n) => n.className)) ?? "", /running/);

  // History: arrow keys, Home/End and the buttons.
  await page.keyboard.press("ArrowLeft");
  assert.equal(await boardPly(page), 6);
  assert.deepEqual(await page.$$eval("#board rect.check", (rs) => rs.length), 0);
  await page.keyboard.press("Home");
  assert.equal(await boardPly(page), 0);
  await page.click("#next");
  assert.equal(await boardPly(page), 1);
  assert.deepEqual(await page.$$eval("#board rect.last", (rs) => rs.map((r) => r.getAttribute("data-square")).sort()), ["e2", "e4"]);
  await page.keyboard.press("ArrowRight");
  assert.equal(await boardPly(page), 2);
  await page.keyboard.press("End");
  assert.equal(await boardPly(page), 7);
  await page.click("#prev");
  assert.equal(await boardPly(page), 6);
  await page.click('#moves [data-ply="7"]');
  assert.equal(await boardPly(page), 7);

  const shot = join(process.env.CHESS_SCREENSHOT_DIR || tempDir("screenshot-"), `${gameId}.png`);
  await page.screenshot({ path: shot, fullPage: true });
  const screenshotBytes = statSync(shot).size;
  assert.ok(screenshotBytes > 10_000, `a screenshot of ${screenshotBytes} bytes`);

  // The list of games has this one.
  await page.goto(`${webUrl}/`, { waitUntil: "load" });
  await page.waitForFunction((id: string) => Array.from(document.querySelectorAll("#games a")).some((a) => a.textContent === id), { timeout: 10_000 }, gameId);
  assert.equal(await page.$eval("#game-pane", (n) => getComputedStyle(n).display), "none", "no game: no board");
  assert.notEqual(await page.$eval("#hint", (n) => getComputedStyle(n).display), "none");
  assert.deepEqual(errors, [], "no script errors");
  return { firstBoardMs, lagsMs, screenshotBytes };
}

function report(label: string, w: Watched) {
  const max = Math.max(...w.lagsMs).toFixed(0);
  console.log(`${label}: first board ${w.firstBoardMs} ms after navigation; moves shown ${w.lagsMs.map((l) => l.toFixed(0)).join(", ")} ms after Play (max ${max}); screenshot ${w.screenshotBytes} bytes`);
}

test("the game page shows a game played over gRPC, live, in headless chromium", async (t) => {
  const missing = noChromium();
  if (missing) return t.skip(missing);
  const server = await startServer({ grpcWeb: true });
  t.after(() => server.stop());
  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  const watched = await watchAGame(page, server.webUrl, server.client(), "page-plain");
  report("plain HTTP", watched);
});

test("the game page over TLS, with a token typed into it", async (t) => {
  const missing = noChromium();
  if (missing) return t.skip(missing);
  const certs = makeCertificates();
  const tokens = join(certs.dir, "tokens");
  writeFileSync(tokens, `operator read ${sha256("reader-token")}\nmatchmaker play ${sha256("player-token")}\n`);
  const server = await startServer({ args: ["--auth-tokens", tokens], grpcWeb: true, tls: { cert: certs.cert, key: certs.key } });
  t.after(() => server.stop());
  // Chromium trusts exactly this certificate's key (its SPKI hash), nothing else.
  const spki = execSync(
    `openssl x509 -in "${certs.cert}" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`,
  )
    .toString()
    .trim();
  const browser = await launchChromium({ args: [`--ignore-certificate-errors-spki-list=${spki}`] });
  t.after(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  const player = server.client({ token: "player-token", nodeOptions: { ca: readFileSync(certs.ca) } });
  const watched = await watchAGame(page, server.webUrl, player, "page-tls", "reader-token");
  report("TLS and a token", watched);
});

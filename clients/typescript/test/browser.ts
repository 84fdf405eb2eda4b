// A real browser for the game page's tests and measurements: Debian's chromium, headless,
// driven by puppeteer-core (which downloads no browser). $CHESS_CHROMIUM names another
// binary. Without one, the tests say so loudly and skip, unless CHESS_REQUIRE_CHROMIUM=1
// (CI sets it), which makes the absence a failure.
import { existsSync } from "node:fs";
import puppeteer from "puppeteer-core";
import type { Browser, LaunchOptions } from "puppeteer-core";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The browser binary, or undefined when none is installed. */
export function chromiumPath(): string | undefined {
  const named = process.env.CHESS_CHROMIUM;
  if (named) return existsSync(named) ? named : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

/** Whether a missing browser fails the tests (CHESS_REQUIRE_CHROMIUM=1) rather than skips them. */
export function chromiumRequired(): boolean {
  return process.env.CHESS_REQUIRE_CHROMIUM === "1";
}

/**
 * Why the browser tests cannot run, loudly on stderr, or undefined when they can. Throws
 * when CHESS_REQUIRE_CHROMIUM=1 and no browser is there.
 */
export function noChromium(): string | undefined {
  if (chromiumPath() !== undefined) return undefined;
  const named = process.env.CHESS_CHROMIUM;
  const why =
    (named ? `no chromium at $CHESS_CHROMIUM (${named})` : `no chromium at ${CANDIDATES.join(", ")}`) +
    ": the game page's browser tests need Debian's chromium (apt-get install chromium) " +
    "or $CHESS_CHROMIUM naming a Chromium binary";
  if (chromiumRequired()) throw new Error(`${why} (CHESS_REQUIRE_CHROMIUM=1)`);
  process.stderr.write(`\n!!!!!!!! SKIPPED: ${why} !!!!!!!!\n\n`);
  return why;
}

/** Starts headless chromium; the caller closes it. */
export async function launchChromium(options: LaunchOptions = {}): Promise<Browser> {
  const executablePath = chromiumPath();
  if (executablePath === undefined) throw new Error("no chromium (see noChromium())");
  return puppeteer.launch({
    executablePath,
    headless: true,
    ...options,
    // Root in CI and containers: Chromium's sandbox needs a user namespace it may not get.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", ...(options.args ?? [])],
  });
}

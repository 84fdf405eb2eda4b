// GameFollower: a WatchGame spectator that survives dropped streams and resyncs, like the
// Python client's GameFollower (clients/python/src/chess_service_client/_follower.py).
import { Code } from "@connectrpc/connect";
import { ChessError, ERROR_DOMAIN } from "./errors.js";
import { GameStatus } from "./gen/chess/v1/chess_pb.js";
import type { GameEvent, WatchGameResponse } from "./gen/chess/v1/chess_pb.js";

/** Options of `follow()`. */
export interface FollowOptions {
  /** The first version to yield (default 0: the whole history from the game's creation). */
  fromVersion?: number | bigint;
  /** Aborting it ends the iteration cleanly: the loop finishes, nothing is thrown. */
  signal?: AbortSignal;
  /** End after the first event whose state is no longer GAME_STATUS_IN_PROGRESS. */
  stopWhenOver?: boolean;
  /** The first wait before reconnecting, in ms (default 100); doubles up to backoffMaxMs. */
  backoffInitialMs?: number;
  /** The longest wait before reconnecting, in ms (default 5000). */
  backoffMaxMs?: number;
  /**
   * Consecutive connections that fail without an event before FollowerGaveUp is thrown
   * (default 20; null: never give up).
   */
  maxAttempts?: number | null;
}

/** Opens one WatchGame stream (the client's `watchGame`, errors as ChessError). */
export type WatchFn = (
  gameId: string,
  fromVersion: bigint,
  signal: AbortSignal,
) => AsyncIterable<WatchGameResponse>;

/** The follower failed `attempts` times in a row without receiving an event. */
export class FollowerGaveUp extends Error {
  override readonly name = "FollowerGaveUp";
  constructor(
    readonly attempts: number,
    readonly lastError: ChessError | undefined,
  ) {
    super(`gave up following after ${attempts} attempts: ${lastError?.message ?? "the stream ended"}`);
  }
}

/**
 * Whether a failed stream is worth opening again: UNAVAILABLE (the server is unreachable,
 * restarting or shutting down), and a stream the connection broke rather than the server
 * ended. The server's own errors always carry a chess.v1 ErrorInfo; a connection closed
 * or reset under the stream surfaces in Connect-ES without one, as CANCELLED (Node closes
 * the HTTP/2 streams of a session whose socket ended with CANCEL: a kill -9 of the
 * server), ABORTED (ECONNRESET), INTERNAL or UNKNOWN. The follower asks this only when its
 * caller did not abort.
 */
export function isRetryableStreamError(error: ChessError): boolean {
  if (error.code === Code.Unavailable) return true;
  const fromServer = error.domain === ERROR_DOMAIN;
  return (
    !fromServer &&
    (error.code === Code.Canceled ||
      error.code === Code.Internal ||
      error.code === Code.Aborted ||
      error.code === Code.Unknown)
  );
}

/**
 * Follows a game's WatchGame stream: yields each GameEvent exactly once, in version
 * order, from `fromVersion` on.
 *
 * When the stream drops (UNAVAILABLE or a broken connection: a killed or restarting
 * server), ends without an error, or ends with a `resync` (this spectator fell behind),
 * it reconnects with `fromVersion` = the last version it yielded + 1, after an
 * exponential backoff with jitter (reset once an event arrives). An event it already
 * yielded is dropped; a gap (never sent by a correct server) is not skipped: it
 * reconnects from the missing version. Any other error (NOT_FOUND, PERMISSION_DENIED, ...)
 * is thrown as the ChessError. After `maxAttempts` consecutive failed connections it
 * throws FollowerGaveUp. Aborting `signal` ends the iteration without an error, also
 * while it waits for an event or to reconnect; so does leaving the loop (`break`).
 *
 * Counters for callers and tests: `reconnects` (streams opened after the first),
 * `resyncs` (resync messages received), `dropped` (streams lost with an error),
 * `duplicates` (events received again and not yielded).
 */
export class GameFollower implements AsyncIterable<GameEvent> {
  reconnects = 0;
  resyncs = 0;
  dropped = 0;
  duplicates = 0;
  /** The next version to yield. */
  nextVersion: bigint;

  private readonly signal: AbortSignal | undefined;
  private readonly stopWhenOver: boolean;
  private readonly backoffInitialMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxAttempts: number | null;

  constructor(
    private readonly watch: WatchFn,
    readonly gameId: string,
    options: FollowOptions = {},
  ) {
    this.nextVersion = BigInt(options.fromVersion ?? 0);
    this.signal = options.signal;
    this.stopWhenOver = options.stopWhenOver ?? false;
    this.backoffInitialMs = options.backoffInitialMs ?? 100;
    this.backoffMaxMs = options.backoffMaxMs ?? 5000;
    this.maxAttempts = options.maxAttempts === undefined ? 20 : options.maxAttempts;
  }

  /** The version of the last event yielded (undefined before the first). */
  get lastVersion(): bigint | undefined {
    return this.nextVersion > 0n ? this.nextVersion - 1n : undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<GameEvent> {
    return this.run();
  }

  private async *run(): AsyncGenerator<GameEvent, void, undefined> {
    const signal = this.signal;
    let failures = 0;
    let backoff = this.backoffInitialMs;
    let opened = 0;
    let lastError: ChessError | undefined;
    while (!signal?.aborted) {
      if (opened > 0) this.reconnects++;
      opened++;
      // One controller per stream, so that leaving the loop cancels the call.
      const stream = new AbortController();
      const onAbort = () => stream.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      let progressed = false;
      try {
        for await (const message of this.watch(this.gameId, this.nextVersion, stream.signal)) {
          const which = message.message;
          if (which.case === "resync") {
            // The server names the first version not received, which is nextVersion;
            // resuming from what was actually yielded is the same and never skips one.
            this.resyncs++;
            break;
          }
          if (which.case !== "event") continue; // a message kind this client does not know
          const event = which.value;
          if (event.version < this.nextVersion) {
            this.duplicates++;
            continue;
          }
          if (event.version > this.nextVersion) break; // a gap: reconnect from the missing version
          this.nextVersion = event.version + 1n;
          progressed = true;
          failures = 0;
          backoff = this.backoffInitialMs;
          yield event;
          if (this.stopWhenOver && event.state !== undefined && event.state.status !== GameStatus.IN_PROGRESS) {
            return;
          }
          if (signal?.aborted) return;
        }
      } catch (e) {
        if (signal?.aborted) return;
        const error = ChessError.from(e);
        if (!isRetryableStreamError(error)) throw error;
        this.dropped++;
        lastError = error;
      } finally {
        signal?.removeEventListener("abort", onAbort);
        stream.abort();
      }
      if (signal?.aborted) return;
      if (!progressed) {
        failures++;
        if (this.maxAttempts !== null && failures >= this.maxAttempts) {
          throw new FollowerGaveUp(failures, lastError);
        }
        await sleep(backoff * (0.5 + Math.random() / 2), signal);
        backoff = Math.min(backoff * 2, this.backoffMaxMs);
      }
    }
  }
}

/** Waits `ms`, or less when `signal` aborts (never rejects). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

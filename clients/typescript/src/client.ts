// The ChessClient over any Connect transport: every chess.v1.ChessService RPC as a
// camelCase method taking and returning the generated messages, with a default deadline,
// errors as ChessError, plus `follow`. The entry points (index.ts for browsers, node.ts
// for Node) choose the transport.
import { createClient } from "@connectrpc/connect";
import type { CallOptions, Client, Interceptor, Transport } from "@connectrpc/connect";
import { ChessError } from "./errors.js";
import { ChessService } from "./gen/chess/v1/chess_pb.js";
import type { WatchGameResponse } from "./gen/chess/v1/chess_pb.js";
import { GameFollower } from "./follow.js";
import type { FollowOptions } from "./follow.js";

/** Default deadline of a unary call, in milliseconds (a WatchGame stream has none). */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The wire protocol: gRPC (HTTP/2, Node only) or gRPC-Web (browsers, and Node). */
export type Protocol = "grpc" | "grpc-web";

/** Options of createChessClient. */
export interface ChessClientOptions {
  /**
   * The server's URL: `http://host:port` (or https). For "grpc-web", the server's
   * `--grpc-web-listen` address; for "grpc", its `--listen` address.
   */
  baseUrl: string;
  /** Sent as `authorization: Bearer TOKEN` on every call when set. */
  token?: string;
  /** "grpc" (Node's default) or "grpc-web" (the only one in browsers, their default). */
  protocol?: Protocol;
  /**
   * The deadline of every unary call, in ms (default 10 s); null: none. A call's own
   * `timeoutMs` wins. Streams (watchGame, follow) get a deadline only when the call asks.
   */
  timeoutMs?: number | null;
  /** More interceptors, run after the one that adds the token. */
  interceptors?: Interceptor[];
}

/** Every RPC of chess.v1.ChessService, as Connect-ES's typed client has them. */
export type ChessServiceMethods = Client<typeof ChessService>;

/** A client of chess.v1.ChessService. Every RPC method throws ChessError on failure. */
export interface ChessClient extends ChessServiceMethods {
  /**
   * Follows a game: an async iterable of its GameEvents, each once, in version order,
   * across dropped streams, server restarts and resyncs. Aborting `signal` ends the loop.
   */
  follow(gameId: string, options?: FollowOptions): GameFollower;
  /** Closes the client's connections (Node's HTTP/2 sessions); idle ones close by themselves. */
  close(): void;
}

/** The interceptor that sends `authorization: Bearer TOKEN`. */
export function bearerToken(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/** The interceptors a client's options ask for. */
export function interceptorsFor(options: ChessClientOptions): Interceptor[] {
  return [...(options.token ? [bearerToken(options.token)] : []), ...(options.interceptors ?? [])];
}

/**
 * A ChessClient over an existing Connect transport (built with `interceptorsFor` for the
 * token). `close` is called by the client's close().
 */
export function createChessClientFromTransport(
  transport: Transport,
  options: { timeoutMs?: number | null; close?: () => void } = {},
): ChessClient {
  const defaultTimeout = options.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : options.timeoutMs;
  const raw = createClient(ChessService, transport) as unknown as Record<
    string,
    (request: unknown, options?: CallOptions) => unknown
  >;
  const client: Record<string, unknown> = {};
  for (const method of ChessService.methods) {
    const call = raw[method.localName];
    if (method.methodKind === "unary") {
      client[method.localName] = async (request: unknown, callOptions?: CallOptions) => {
        const timeoutMs = callOptions?.timeoutMs ?? defaultTimeout ?? undefined;
        try {
          return await call(request, { ...callOptions, timeoutMs });
        } catch (e) {
          throw ChessError.from(e);
        }
      };
    } else if (method.methodKind === "server_streaming") {
      client[method.localName] = (request: unknown, callOptions?: CallOptions) =>
        rethrowAsChessError(call(request, callOptions) as AsyncIterable<unknown>);
    }
  }
  const methods = client as unknown as ChessServiceMethods;
  const watch = (gameId: string, fromVersion: bigint, signal: AbortSignal) =>
    methods.watchGame({ gameId, fromVersion }, { signal }) as AsyncIterable<WatchGameResponse>;
  return Object.assign(methods, {
    follow: (gameId: string, followOptions?: FollowOptions) => new GameFollower(watch, gameId, followOptions),
    close: () => options.close?.(),
  });
}

async function* rethrowAsChessError<T>(stream: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  try {
    yield* stream;
  } catch (e) {
    throw ChessError.from(e);
  }
}

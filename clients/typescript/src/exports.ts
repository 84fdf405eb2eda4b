// What both entry points export beside createChessClient.
export { Code, ConnectError } from "@connectrpc/connect";
export type { CallOptions, Interceptor, Transport } from "@connectrpc/connect";
export { ChessError, ERROR_DOMAIN, reasonFromName } from "./errors.js";
export { FollowerGaveUp, GameFollower, isRetryableStreamError } from "./follow.js";
export type { FollowOptions, WatchFn } from "./follow.js";
export {
  DEFAULT_TIMEOUT_MS,
  bearerToken,
  createChessClientFromTransport,
  interceptorsFor,
} from "./client.js";
export type { ChessClient, ChessClientOptions, ChessServiceMethods, Protocol } from "./client.js";
// The generated messages, enums and service of chess.v1 (ErrorReason among them).
export * from "./gen/chess/v1/chess_pb.js";
export * from "./gen/chess/v1/error_reason_pb.js";
// The google.rpc error model (Status, ErrorInfo, RetryInfo, ResourceInfo, BadRequest, ...).
export * as rpc from "./rpc.js";

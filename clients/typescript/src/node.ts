// The Node entry point: gRPC over HTTP/2 (the default) or gRPC-Web over HTTP/1.1 or
// HTTP/2, with @connectrpc/connect-node.
import { Http2SessionManager, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import type * as http2 from "node:http2";
import type * as https from "node:https";
import { createChessClientFromTransport, interceptorsFor } from "./client.js";
import type { ChessClient, ChessClientOptions } from "./client.js";

export * from "./exports.js";

/** Options of the Node client. */
export interface NodeChessClientOptions extends ChessClientOptions {
  /**
   * gRPC-Web's HTTP version: "2" (the default; cleartext HTTP/2 with prior knowledge, or
   * TLS with ALPN) or "1.1" (for a proxy that speaks only HTTP/1.1). gRPC is always "2".
   */
  httpVersion?: "1.1" | "2";
  /** TLS and socket options for Node's http2.connect (HTTP/2) or https.request (HTTP/1.1), such as `ca`. */
  nodeOptions?: http2.SecureClientSessionOptions | https.RequestOptions;
  /**
   * HTTP/2 keepalive: a PING after this many ms without traffic, so that a dead
   * connection under a long WatchGame stream is noticed (default 30 s).
   */
  pingIntervalMs?: number;
}

/** A client of chess.v1.ChessService over gRPC (HTTP/2, the default) or gRPC-Web. */
export function createChessClient(options: NodeChessClientOptions): ChessClient {
  const protocol = options.protocol ?? "grpc";
  const interceptors = interceptorsFor(options);
  const http2Options = {
    pingIntervalMs: options.pingIntervalMs ?? 30_000,
    pingTimeoutMs: 10_000,
  };
  if (protocol === "grpc-web" && options.httpVersion === "1.1") {
    const transport = createGrpcWebTransport({
      baseUrl: options.baseUrl,
      httpVersion: "1.1",
      interceptors,
      nodeOptions: options.nodeOptions as https.RequestOptions | undefined,
    });
    return createChessClientFromTransport(transport, { timeoutMs: options.timeoutMs });
  }
  if (protocol !== "grpc" && protocol !== "grpc-web") {
    throw new TypeError(`unknown protocol "${String(protocol)}": "grpc" or "grpc-web"`);
  }
  const nodeOptions = options.nodeOptions as http2.SecureClientSessionOptions | undefined;
  const sessionManager = new Http2SessionManager(options.baseUrl, http2Options, nodeOptions);
  const common = { baseUrl: options.baseUrl, httpVersion: "2" as const, interceptors, sessionManager, nodeOptions };
  const transport = protocol === "grpc" ? createGrpcTransport(common) : createGrpcWebTransport(common);
  return createChessClientFromTransport(transport, {
    timeoutMs: options.timeoutMs,
    close: () => sessionManager.abort(),
  });
}

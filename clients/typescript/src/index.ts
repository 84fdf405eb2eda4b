// The browser entry point (also the default for bundlers and any runtime with fetch):
// gRPC-Web over fetch with @connectrpc/connect-web. Nothing here imports a Node module,
// so esbuild or any bundler can pack it for a page. Node resolves the package to node.ts.
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { createChessClientFromTransport, interceptorsFor } from "./client.js";
import type { ChessClient, ChessClientOptions } from "./client.js";

export * from "./exports.js";

/**
 * A client of chess.v1.ChessService over gRPC-Web (fetch). `protocol` must be
 * "grpc-web" (the default): a browser cannot speak gRPC's HTTP/2 trailers.
 */
export function createChessClient(options: ChessClientOptions): ChessClient {
  if ((options.protocol ?? "grpc-web") !== "grpc-web") {
    throw new TypeError(
      `protocol "${options.protocol}" needs Node (import "chess-service-client/node"); browsers speak "grpc-web"`,
    );
  }
  const transport = createGrpcWebTransport({
    baseUrl: options.baseUrl,
    interceptors: interceptorsFor(options),
  });
  return createChessClientFromTransport(transport, { timeoutMs: options.timeoutMs });
}

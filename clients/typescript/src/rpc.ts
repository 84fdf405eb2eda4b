// The vendored google.rpc protos (proto/third_party), generated: the error model.
export * from "./gen/google/rpc/status_pb.js";
export * from "./gen/google/rpc/error_details_pb.js";
export * from "./gen/google/rpc/code_pb.js";

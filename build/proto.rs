//! Build-time compilation of `proto/chess/v1/chess.proto` with protox (pure Rust, so no
//! system `protoc` is needed) into tonic client and server code.
//!
//! `compile_fds` ignores `file_descriptor_set_path`, so the encoded descriptor set that
//! server reflection serves is written to `OUT_DIR` here, next to the generated code.
//!
//! The code is generated twice. `OUT_DIR/chess.v1.rs` holds the messages and the typed
//! client (`crate::pb`, what callers and the tests use). `OUT_DIR/server/chess.v1.rs`
//! holds only the server, over the same messages, except that it answers LegalMoves with
//! `crate::service::wire::EncodedLegalMoves`: bytes encoded once per game state (or FEN)
//! and sent as they are, instead of ~150 strings cloned and encoded again on every call.
//! The bytes on the wire are those of `chess.v1.LegalMovesResponse`.

use std::path::Path;

use protox::prost::Message as _;

/// The proto files of the service, relative to the crate root.
const PROTOS: &[&str] = &[
    "proto/chess/v1/chess.proto",
    "proto/chess/v1/error_reason.proto",
];
/// The import root of the protos.
const INCLUDE: &str = "proto";
/// The descriptor set file name, read back with `tonic::include_file_descriptor_set!`.
pub const DESCRIPTOR_SET: &str = "chess_descriptor";
/// The subdirectory of `OUT_DIR` for the server's generated code.
pub const SERVER_DIR: &str = "server";

pub fn generate(out_dir: &Path) {
    let fds = match protox::compile(PROTOS, [INCLUDE]) {
        Ok(fds) => fds,
        Err(e) => panic!("compiling {PROTOS:?}: {e:?}"),
    };
    let descriptor_path = out_dir.join(format!("{DESCRIPTOR_SET}.bin"));
    if let Err(e) = std::fs::write(&descriptor_path, fds.encode_to_vec()) {
        panic!("writing {}: {e}", descriptor_path.display());
    }
    if let Err(e) = tonic_prost_build::configure()
        .build_client(true)
        .build_server(false)
        .compile_fds(fds.clone())
    {
        panic!("generating gRPC code: {e}");
    }
    let server_dir = out_dir.join(SERVER_DIR);
    if let Err(e) = std::fs::create_dir_all(&server_dir) {
        panic!("creating {}: {e}", server_dir.display());
    }
    // Every message is the client's type; the most specific extern path wins, so the
    // LegalMoves answer alone is the pre-encoded one.
    if let Err(e) = tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .out_dir(&server_dir)
        .extern_path(".chess.v1", "crate::pb")
        .extern_path(
            ".chess.v1.LegalMovesResponse",
            "crate::service::wire::EncodedLegalMoves",
        )
        .compile_fds(fds)
    {
        panic!("generating the gRPC server: {e}");
    }
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    println!("cargo:rerun-if-changed=build/proto.rs");
}

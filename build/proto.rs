//! Build-time compilation of `proto/chess/v1/chess.proto` with protox (pure Rust, so no
//! system `protoc` is needed) into tonic client and server code.
//!
//! `compile_fds` ignores `file_descriptor_set_path`, so the encoded descriptor set that
//! server reflection serves is written to `OUT_DIR` here, next to the generated code.

use std::path::Path;

use protox::prost::Message as _;

/// The proto files of the service, relative to the crate root.
const PROTOS: &[&str] = &["proto/chess/v1/chess.proto"];
/// The import root of the protos.
const INCLUDE: &str = "proto";
/// The descriptor set file name, read back with `tonic::include_file_descriptor_set!`.
pub const DESCRIPTOR_SET: &str = "chess_descriptor";

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
        .build_server(true)
        .compile_fds(fds)
    {
        panic!("generating gRPC code: {e}");
    }
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    println!("cargo:rerun-if-changed=build/proto.rs");
}

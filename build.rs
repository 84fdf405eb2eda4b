//! Build script: generates the slider attack tables and the gRPC code.

#[path = "build/tables.rs"]
mod tables;

#[path = "build/proto.rs"]
mod proto;

fn main() {
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    tables::generate(&out_dir);
    proto::generate(&out_dir);
    println!("cargo:rerun-if-changed=build/tables.rs");
    println!("cargo:rerun-if-changed=build.rs");
}

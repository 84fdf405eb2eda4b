//! Build script: generates the slider attack tables and the gRPC code, and names the
//! commit built (for `chess_build_info`).

#[path = "build/tables.rs"]
mod tables;

#[path = "build/proto.rs"]
mod proto;

#[path = "build/commit.rs"]
mod commit;

fn main() {
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR is set by cargo"));
    tables::generate(&out_dir);
    proto::generate(&out_dir);
    commit::emit();
    println!("cargo:rerun-if-changed=build/tables.rs");
    println!("cargo:rerun-if-changed=build/commit.rs");
    println!("cargo:rerun-if-changed=build.rs");
}

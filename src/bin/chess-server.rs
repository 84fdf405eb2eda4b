//! `chess-server`: the authoritative chess rules service over gRPC.
//!
//! `cargo run --release` starts it on `127.0.0.1:50051` with its store in `./data`;
//! `chess-server --help` lists every flag and its environment variable.

use std::process::ExitCode;

// A faster allocator: the service allocates many small strings per call (protobuf messages), which
// mimalloc serves much faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chess_service::server::{self, Config};
use clap::Parser as _;

/// `chess-server verify`: checks a stopped embedded store (see docs/operations.md).
#[derive(clap::Parser, Debug)]
#[command(
    name = "chess-server verify",
    about = "Reads, decodes and replays every record of a stopped embedded store, checks it against its commit ledger, and exits non-zero on any damage."
)]
struct VerifyArgs {
    /// Directory of the embedded game store.
    #[arg(long, env = "CHESS_DATA_DIR", default_value = "./data")]
    data_dir: std::path::PathBuf,
}

fn verify(args: impl Iterator<Item = std::ffi::OsString>) -> ExitCode {
    let args = VerifyArgs::parse_from(args);
    let mut out = std::io::stdout().lock();
    match chess_service::store::verify::verify(&args.data_dir, &mut out) {
        Ok(summary) if summary.ok() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("cannot verify {}: {e}", args.data_dir.display());
            ExitCode::from(2)
        }
    }
}

/// Turns transparent huge pages off for this process. mimalloc asks for them on its
/// arenas, and then gives freed parts back to the kernel, so memory that comes and goes
/// (a burst of large answers) is faulted in again as 2 MiB pages the kernel must zero:
/// with them, 256 unread ListGames pages cost the server 1.9 s of CPU, most of it zeroing
/// pages, and a well-behaved caller's p99 went past 50 ms; without, 0.2-0.3 s (issue 30,
/// docs/benchmarks/operations.md). Best effort: a kernel without the switch keeps them.
fn no_transparent_huge_pages() {
    // SAFETY: prctl with integer arguments only; it changes a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    no_transparent_huge_pages();
    if std::env::args_os().nth(1).is_some_and(|a| a == "verify") {
        return verify(std::env::args_os().skip(1));
    }
    let config = Config::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Inside the runtime: the OTLP exporter's channel is started on it.
    let traces = {
        let _runtime = runtime.enter();
        server::init_logging(config.log_format, config.ops.otlp_endpoint.as_deref())
    };
    let result = runtime.block_on(server::run(config));
    if let Some(traces) = traces {
        traces.shutdown();
    }
    // Dropping the tasks left (connections, a perft being stopped) raises their stop
    // flags; blocking work then has a moment to notice before the process exits.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "chess-server stopped");
            ExitCode::FAILURE
        }
    }
}

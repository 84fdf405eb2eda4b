//! `cargo run --release --example perft -- "<fen>" <depth> [chess960]`: perft with divide.
use chess_service::rules::{Position, Variant, perft_divide};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fen = args
        .get(1)
        .map(String::as_str)
        .unwrap_or("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    let depth: u32 = args.get(2).and_then(|d| d.parse().ok()).unwrap_or(5);
    let variant = if args.get(3).is_some() {
        Variant::Chess960
    } else {
        Variant::Standard
    };
    let pos = match Position::from_fen(fen, variant) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bad FEN: {e}");
            std::process::exit(2);
        }
    };
    let start = std::time::Instant::now();
    let divide = perft_divide(&pos, depth);
    let total: u64 = divide.iter().map(|(_, n)| n).sum();
    for (m, n) in &divide {
        println!("{}: {n}", pos.uci(*m));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "total {total} in {secs:.3}s ({:.1} M nodes/s)",
        total as f64 / secs / 1e6
    );
}

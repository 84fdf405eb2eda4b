//! Any bytes as the PGN of one game: never panics; what reads is a legal line from its
//! start, its errors point inside the text, and our own export of it reads back the same.
#![no_main]

use chess_service::rules::pgn::to_pgn;
use chess_service::rules::pgn_read::{PgnError, read_pgn};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match read_pgn(text) {
        Ok(game) => {
            let board = game.board();
            let mut pos = game.start;
            for m in &game.moves {
                assert!(pos.is_legal(*m));
                pos = pos.after(*m);
            }
            let again = read_pgn(&to_pgn(&board)).expect("our own export reads back");
            assert_eq!(again.moves, game.moves);
            assert_eq!(again.start, game.start);
        }
        Err(PgnError::Syntax { line, column, .. })
        | Err(PgnError::IllegalMove { line, column, .. })
        | Err(PgnError::AmbiguousMove { line, column, .. }) => {
            // Every LF and every CR may end a line: an upper bound of the line count.
            let lines = 1 + text.matches(['\n', '\r']).count() as u32;
            assert!(line >= 1 && column >= 1 && line <= lines);
        }
        Err(PgnError::MultipleGames { line }) => {
            assert!(line >= 1 && line <= 1 + text.matches(['\n', '\r']).count() as u32)
        }
    }
});

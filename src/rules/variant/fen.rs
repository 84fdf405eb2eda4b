//! Variant FEN: standard FEN plus crazyhouse's pocket (`[QNp]` after the placement, or a
//! ninth rank) and promoted marks (`Q~`), and three-check's counters, read in both forms
//! (lichess's checks given `+N+M` as the 7th field, python-chess's checks remaining `N+M`
//! after the en passant field) and written in lichess's.

use super::pockets::Pockets;
use super::{VariantPosition, VariantRules};
use crate::rules::bitboard::Bitboard;
use crate::rules::fen::{FenError, parse_fields, split_fields};
use crate::rules::piece::{Piece, Role};
use crate::rules::position::Variant;
use crate::rules::square::{Color, File, Square};

impl<R: VariantRules> VariantPosition<R> {
    /// Parses a FEN of this variant. Castling rights may be written as in standard FEN,
    /// X-FEN or Shredder-FEN; rooks off the a- and h-files (Atomic960 and the like) make
    /// the position's castling follow Chess960.
    pub fn from_fen(fen: &str) -> Result<VariantPosition<R>, FenError> {
        let mut fields = split_fields(fen, 7)?;
        let mut checks_given = [0u8; 2];
        if R::COUNTS_CHECKS {
            if let Some(given) = fields.get(6).filter(|f| f.starts_with('+')).copied() {
                checks_given = parse_checks(&given[1..], given, false)?;
                fields.remove(6);
            } else if let Some(remaining) = fields.get(4).filter(|f| f.contains('+')).copied() {
                checks_given = parse_checks(remaining, remaining, true)?;
                fields.remove(4);
            }
        }
        if fields.len() > 6 {
            return Err(FenError::TooManyFields {
                found: fields.len(),
            });
        }
        let mut pockets = Pockets::default();
        let placement_text;
        if R::POCKETS {
            let (board, pocket) = split_pocket(fields[0]);
            placement_text = board;
            for c in pocket.chars() {
                let piece = Piece::from_fen_char(c)
                    .filter(|p| c.is_ascii_alphabetic() && p.role != Role::King)
                    .ok_or(FenError::BadPocket { found: c })?;
                pockets.add(piece.color, piece.role);
            }
        } else {
            placement_text = fields[0];
        }
        fields[0] = placement_text;
        if !R::CASTLING && fields.get(2).is_some_and(|&c| c != "-") {
            return Err(FenError::NoCastlingInVariant { variant: R::KEY });
        }
        let mut promoted = None;
        // Chess960 parsing accepts every castling notation; the mode is then narrowed to
        // standard when every right is standard-shaped, so UCI castling reads `e1g1`.
        let (mut board, ep) =
            parse_fields(&fields, Variant::Chess960, &R::PLACEMENT, &mut promoted)?;
        if standard_castling(&board) {
            board.variant = Variant::Standard;
        }
        if R::POCKETS {
            let in_play = board.occupied().count()
                + pockets.total(Color::White)
                + pockets.total(Color::Black);
            if in_play > super::crazyhouse::MAX_PIECES {
                return Err(FenError::TooManyPiecesInPlay {
                    count: in_play,
                    most: super::crazyhouse::MAX_PIECES,
                });
            }
        }
        board.hash = board.zobrist_from_scratch();
        let mut pos = VariantPosition {
            board,
            pockets,
            promoted: promoted.unwrap_or(Bitboard::EMPTY),
            checks_given,
            rules: R::default(),
        };
        if let Some(why) = R::impossible_placement(&pos) {
            return Err(FenError::ImpossibleInVariant {
                variant: R::KEY,
                why,
            });
        }
        if let Some(color) = R::impossible_check(&pos) {
            return Err(FenError::OpponentInCheck { color });
        }
        if let Some(ep) = ep {
            pos.keep_ep_if_capturable(ep);
        }
        Ok(pos)
    }

    /// The FEN: crazyhouse's pocket in brackets after the placement and `~` after
    /// promoted pieces; three-check's checks given as lichess writes them (`+N+M`).
    pub fn to_fen(&self) -> String {
        let fen = self.board.to_fen();
        let mut out = String::with_capacity(fen.len() + 16);
        let (placement, rest) = fen.split_once(' ').expect("a FEN has fields");
        if R::POCKETS && self.promoted.any() {
            let mut rank = 7u8;
            let mut file = 0u8;
            for c in placement.chars() {
                out.push(c);
                match c {
                    '/' => {
                        rank = rank.saturating_sub(1);
                        file = 0;
                    }
                    '1'..='8' => file += c as u8 - b'0',
                    _ => {
                        let sq = Square::from_coords(
                            File::ALL[file as usize],
                            crate::rules::square::Rank::ALL[rank as usize],
                        );
                        if self.promoted.contains(sq) {
                            out.push('~');
                        }
                        file += 1;
                    }
                }
            }
        } else {
            out.push_str(placement);
        }
        if R::POCKETS {
            out.push('[');
            out.push_str(&self.pockets.to_fen());
            out.push(']');
        }
        out.push(' ');
        out.push_str(rest);
        if R::COUNTS_CHECKS {
            out.push_str(&format!(
                " +{}+{}",
                self.checks_given[0], self.checks_given[1]
            ));
        }
        out
    }
}

/// The placement and the pocket: `board[pocket]` or a ninth rank `board/pocket`.
fn split_pocket(text: &str) -> (&str, &str) {
    if let Some((board, pocket)) = text.strip_suffix(']').and_then(|t| t.split_once('[')) {
        return (board, pocket);
    }
    if text.matches('/').count() == 8 {
        let (board, pocket) = text.rsplit_once('/').expect("eight slashes");
        return (board, pocket);
    }
    (text, "")
}

/// `W+B`: checks remaining (`remaining`) or given, each 0 to 3, as checks given.
fn parse_checks(text: &str, field: &str, remaining: bool) -> Result<[u8; 2], FenError> {
    let bad = || FenError::BadCheckCount {
        found: field.chars().take(16).collect(),
    };
    let (w, b) = text.split_once('+').ok_or_else(bad)?;
    let parse = |t: &str| -> Result<u8, FenError> {
        match t {
            "0" | "1" | "2" | "3" => Ok(t.as_bytes()[0] - b'0'),
            _ => Err(bad()),
        }
    };
    let (w, b) = (parse(w)?, parse(b)?);
    Ok(if remaining { [3 - w, 3 - b] } else { [w, b] })
}

/// Every castling right is an a- or h-file rook with its king on the e-file.
fn standard_castling(board: &crate::rules::position::Position) -> bool {
    board.castling_rooks().into_iter().all(|rook| {
        let color = if rook.rank() == Color::White.back_rank() {
            Color::White
        } else {
            Color::Black
        };
        matches!(rook.file(), File::A | File::H)
            && board
                .pieces(color, Role::King)
                .first()
                .is_some_and(|k| k.file() == File::E && k.rank() == color.back_rank())
    })
}

//! FEN in and out. Parsing turns text into a checked [`Position`]; every refusal names the
//! field and the reason. Accepts standard FEN, X-FEN and Shredder-FEN castling fields.

use std::fmt::Write as _;

use super::attacks::Magic;
use super::bitboard::Bitboard;
use super::piece::{Piece, Role};
use super::position::{Position, Variant};
use super::square::{Color, File, Rank, Square};

/// Longest FEN accepted. A legal FEN is under 100 bytes; this leaves room for spacing.
pub const MAX_FEN_LEN: usize = 256;

/// Why a FEN was refused. Each message names the field and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Nothing but spaces.
    #[error("FEN is empty")]
    Empty,
    /// Longer than [`MAX_FEN_LEN`].
    #[error("FEN is {len} bytes long; at most {MAX_FEN_LEN} are accepted")]
    TooLong {
        /// The FEN's length in bytes.
        len: usize,
    },
    /// More than the six fields of a FEN.
    #[error(
        "FEN has {found} fields; expected at most 6 (placement, side to move, castling, en passant, half-move clock, full-move number)"
    )]
    TooManyFields {
        /// How many fields there are.
        found: usize,
    },
    /// The placement does not have 8 ranks.
    #[error("placement: expected 8 ranks separated by '/', found {found}")]
    RankCount {
        /// How many ranks there are.
        found: usize,
    },
    /// A rank of the placement does not add up to 8 squares.
    #[error("placement: rank {rank} describes {squares} squares, not 8")]
    RankLength {
        /// The rank, `1` to `8`.
        rank: char,
        /// How many squares it describes.
        squares: usize,
    },
    /// A character in the placement that is neither a piece letter nor a digit 1-8.
    #[error(
        "placement: invalid character '{found}' in rank {rank} (expected one of pnbrqkPNBRQK or a digit 1-8)"
    )]
    BadCharacter {
        /// The rank, `1` to `8`.
        rank: char,
        /// The character.
        found: char,
    },
    /// A side with a number of kings the variant does not allow (exactly one in standard
    /// chess).
    #[error("placement: {color} has {count} kings; {color} needs {needs}")]
    KingCount {
        /// The side.
        color: Color,
        /// Its number of kings.
        count: u32,
        /// What the variant allows, in words ("exactly one").
        needs: &'static str,
    },
    /// A pawn on the first or last rank.
    #[error("placement: {color} pawn on {square}; pawns cannot stand on the first or last rank")]
    PawnOnBackRank {
        /// The pawn's colour.
        color: Color,
        /// Its square.
        square: Square,
    },
    /// More pieces of one side than the variant allows (16 in standard chess).
    #[error("placement: {color} has {count} pieces; a side has at most {most}")]
    TooManyPieces {
        /// The side.
        color: Color,
        /// Its number of pieces.
        count: u32,
        /// The most the variant allows.
        most: u32,
    },
    /// The side to move is not `w` or `b`.
    #[error("side to move: expected 'w' or 'b', found '{found}'")]
    BadSideToMove {
        /// The field as written.
        found: String,
    },
    /// A character in the castling field that names no right.
    #[error("castling: invalid character '{found}' (expected '-', KQkq, or rook files A-H/a-h)")]
    BadCastlingCharacter {
        /// The character.
        found: char,
    },
    /// A castling right whose king or rook is not where it must be.
    #[error("castling: '{right}' needs {needs}")]
    CastlingWithoutPieces {
        /// The right as written.
        right: char,
        /// What it needs, in words.
        needs: String,
    },
    /// Two castling rights for the same side of the same colour.
    #[error("castling: '{right}' gives {color} a second {side}-side right")]
    DuplicateCastling {
        /// The second right as written.
        right: char,
        /// Its colour.
        color: Color,
        /// "king" or "queen".
        side: &'static str,
    },
    /// A castling right that only Chess960 has, in a standard FEN.
    #[error(
        "castling: '{right}' is a Chess960 right (rook on the {file}-file); use the Chess960 variant"
    )]
    Chess960CastlingInStandard {
        /// The right as written.
        right: char,
        /// The file of its rook.
        file: char,
    },
    /// The en passant field is not a square or `-`.
    #[error("en passant: '{found}' is not a square or '-'")]
    BadEnPassantSquare {
        /// The field as written.
        found: String,
    },
    /// An en passant square no double push could have left.
    #[error("en passant: {square} could not have been produced by a double push: {why}")]
    ImpossibleEnPassant {
        /// The en passant square.
        square: Square,
        /// What rules it out.
        why: String,
    },
    /// The half-move clock is not a number.
    #[error(
        "half-move clock: '{found}' is not a whole number from 0 to {}",
        u32::MAX
    )]
    BadHalfmoves {
        /// The field as written.
        found: String,
    },
    /// The full-move number is not a number from 1.
    #[error(
        "full-move number: '{found}' is not a whole number from 1 to {}",
        u32::MAX
    )]
    BadFullmoves {
        /// The field as written.
        found: String,
    },
    /// A crazyhouse pocket that names something other than pieces a side may hold.
    #[error(
        "pocket: invalid character '{found}' (expected pieces QRBNP for white, qrbnp for black)"
    )]
    BadPocket {
        /// The character.
        found: char,
    },
    /// More pieces on the board and in the pockets than a crazyhouse game has.
    #[error("pocket: the board and the pockets hold {count} pieces; a game has at most {most}")]
    TooManyPiecesInPlay {
        /// Pieces on the board and in hand.
        count: u32,
        /// The most a game holds.
        most: u32,
    },
    /// A three-check counter that is not `N+M` (checks remaining) or `+N+M` (checks
    /// given), each from 0 to 3.
    #[error(
        "checks: '{found}' is not a three-check counter: write checks given as +N+M (7th field) or checks remaining as N+M (after the en passant field), each 0 to 3"
    )]
    BadCheckCount {
        /// The field as written.
        found: String,
    },
    /// Castling rights in a variant without castling.
    #[error("castling: {variant} has no castling; the castling field must be '-'")]
    NoCastlingInVariant {
        /// The variant's name.
        variant: &'static str,
    },
    /// The side that just moved is in check: no position reaches that.
    #[error("position: {color} is not to move but is in check")]
    OpponentInCheck {
        /// The side in check.
        color: Color,
    },
    /// A placement the variant never has (Racing Kings: a pawn, a third rook).
    #[error("placement: {variant} has no such position: {why}")]
    ImpossibleInVariant {
        /// The variant's name.
        variant: &'static str,
        /// What no game of it can reach.
        why: &'static str,
    },
}

impl FenError {
    /// The FEN field the error is about, for field-level error reports.
    pub fn field(&self) -> &'static str {
        match self {
            FenError::Empty | FenError::TooLong { .. } | FenError::TooManyFields { .. } => "fen",
            FenError::RankCount { .. }
            | FenError::RankLength { .. }
            | FenError::BadCharacter { .. }
            | FenError::KingCount { .. }
            | FenError::PawnOnBackRank { .. }
            | FenError::TooManyPieces { .. }
            | FenError::ImpossibleInVariant { .. } => "placement",
            FenError::BadSideToMove { .. } => "side_to_move",
            FenError::BadCastlingCharacter { .. }
            | FenError::CastlingWithoutPieces { .. }
            | FenError::DuplicateCastling { .. }
            | FenError::Chess960CastlingInStandard { .. } => "castling",
            FenError::BadEnPassantSquare { .. } | FenError::ImpossibleEnPassant { .. } => {
                "en_passant"
            }
            FenError::BadHalfmoves { .. } => "halfmove_clock",
            FenError::BadPocket { .. } | FenError::TooManyPiecesInPlay { .. } => "pocket",
            FenError::BadCheckCount { .. } => "checks",
            FenError::NoCastlingInVariant { .. } => "castling",
            FenError::BadFullmoves { .. } => "fullmove_number",
            FenError::OpponentInCheck { .. } => "position",
        }
    }
}

impl Position {
    /// Parses a FEN for the given variant. Missing trailing fields default to `w - - 0 1`.
    ///
    /// A FEN that cannot be a position is refused with the field at fault:
    ///
    /// ```
    /// use chess_service::rules::{Position, Variant};
    ///
    /// let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    /// let pos = Position::from_fen(kiwipete, Variant::Standard).unwrap();
    /// assert_eq!(pos.legal_moves().len(), 48);
    /// assert_eq!(pos.to_fen(), kiwipete);
    ///
    /// // Trailing fields may be left out.
    /// let short = Position::from_fen("4k3/8/8/8/8/8/8/4K2R", Variant::Standard).unwrap();
    /// assert_eq!(short.to_fen(), "4k3/8/8/8/8/8/8/4K2R w - - 0 1");
    ///
    /// // Two white kings: refused, naming the placement field.
    /// let err = Position::from_fen("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", Variant::Standard);
    /// assert_eq!(err.unwrap_err().field(), "placement");
    /// ```
    pub fn from_fen(fen: &str, variant: Variant) -> Result<Position, FenError> {
        let fields = split_fields(fen, 6)?;
        let (mut pos, ep) = parse_fields(&fields, variant, &Placement::STANDARD, &mut None)?;
        let them = !pos.turn;
        if pos.attackers(pos.king(them), pos.turn).any() {
            return Err(FenError::OpponentInCheck { color: them });
        }
        // Keep the en passant square only where a capture is legal (FIDE's identity).
        if let Some(ep) = ep.filter(|&ep| pos.ep_capture_is_legal::<Magic>(ep)) {
            pos.ep_square = Some(ep);
        }
        pos.hash = pos.zobrist_from_scratch();
        Ok(pos)
    }

    /// Canonical FEN. The en passant field appears only when a capture is legal; Chess960
    /// castling is written `KQkq` where that names the right rook, file letters otherwise.
    pub fn to_fen(&self) -> String {
        let mut out = String::with_capacity(90);
        for rank in Rank::ALL.iter().rev() {
            let mut empty = 0;
            for file in File::ALL {
                match self.piece_at(Square::from_coords(file, *rank)) {
                    Some(p) => {
                        if empty > 0 {
                            out.push((b'0' + empty) as char);
                            empty = 0;
                        }
                        out.push(p.fen_char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                out.push((b'0' + empty) as char);
            }
            if *rank != Rank::First {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(self.turn.fen_char());
        out.push(' ');
        out.push_str(&self.castling_fen());
        out.push(' ');
        match self.ep_square {
            Some(sq) => write!(out, "{sq}").expect("writing to a String"),
            None => out.push('-'),
        }
        write!(out, " {} {}", self.halfmoves, self.fullmoves).expect("writing to a String");
        out
    }

    /// The castling field alone.
    pub fn castling_fen(&self) -> String {
        let mut out = String::new();
        for color in Color::ALL {
            let rooks = self.pieces(color, Role::Rook) & Bitboard::back_rank(color);
            // A side without a king (horde, antichess) has no castling rights.
            let Some(king) = self.pieces(color, Role::King).first() else {
                continue;
            };
            // King side first, then queen side, as in KQkq.
            let mut rights: Vec<Square> = (self.castling & Bitboard::back_rank(color))
                .into_iter()
                .collect();
            rights.sort_by_key(|sq| std::cmp::Reverse(sq.file()));
            for rook in rights {
                let king_side = rook.file() > king.file();
                let outermost = if king_side {
                    rooks
                        .into_iter()
                        .filter(|r| r.file() > king.file())
                        .max_by_key(|r| r.file())
                } else {
                    rooks
                        .into_iter()
                        .filter(|r| r.file() < king.file())
                        .min_by_key(|r| r.file())
                };
                let c = if self.variant == Variant::Standard || outermost == Some(rook) {
                    if king_side { 'k' } else { 'q' }
                } else {
                    rook.file().char()
                };
                out.push(if color == Color::White {
                    c.to_ascii_uppercase()
                } else {
                    c
                });
            }
        }
        if out.is_empty() {
            out.push('-');
        }
        out
    }
}

/// What a placement may hold. Standard chess and Chess960 allow exactly one king a side,
/// at most 16 pieces a side and no pawn on the first or last rank; variants relax these.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// The fewest and most kings each side may have, white's then black's.
    pub kings: [(u32, u32); 2],
    /// The most pieces a side may have (`u32::MAX`: no bound).
    pub max_pieces: u32,
    /// White pawns may stand on the first rank (horde).
    pub white_pawns_on_first_rank: bool,
    /// A `~` after a piece marks it promoted (crazyhouse).
    pub promoted_marks: bool,
}

impl Placement {
    /// Standard chess and Chess960.
    pub const STANDARD: Placement = Placement {
        kings: [(1, 1), (1, 1)],
        max_pieces: 16,
        white_pawns_on_first_rank: false,
        promoted_marks: false,
    };
}

/// Splits a FEN into its fields, refusing empty, overlong and over-full text.
pub(crate) fn split_fields(fen: &str, max_fields: usize) -> Result<Vec<&str>, FenError> {
    if fen.len() > MAX_FEN_LEN {
        return Err(FenError::TooLong { len: fen.len() });
    }
    let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
    if fields.is_empty() {
        return Err(FenError::Empty);
    }
    if fields.len() > max_fields {
        return Err(FenError::TooManyFields {
            found: fields.len(),
        });
    }
    Ok(fields)
}

/// Parses the six standard fields (later ones may be missing) into a position whose key
/// is not yet computed, and the en passant square as written (not yet checked for a
/// legal capture). `promoted` receives the `~`-marked squares when the placement allows
/// them.
pub(crate) fn parse_fields(
    fields: &[&str],
    variant: Variant,
    placement: &Placement,
    promoted: &mut Option<Bitboard>,
) -> Result<(Position, Option<Square>), FenError> {
    let mut pos = Position::empty(variant);
    *promoted = parse_placement(&mut pos, fields[0], placement)?;
    pos.turn = match fields.get(1).copied().unwrap_or("w") {
        "w" | "W" => Color::White,
        "b" | "B" => Color::Black,
        other => {
            return Err(FenError::BadSideToMove {
                found: other.to_string(),
            });
        }
    };
    pos.castling = parse_castling(&pos, fields.get(2).copied().unwrap_or("-"), variant)?;
    let ep = parse_en_passant(&pos, fields.get(3).copied().unwrap_or("-"))?;
    pos.halfmoves = match fields.get(4) {
        None => 0,
        Some(t) => parse_number(t).ok_or_else(|| FenError::BadHalfmoves {
            found: t.to_string(),
        })?,
    };
    pos.fullmoves = match fields.get(5) {
        None => 1,
        // Some tools write 0; it means the first move.
        Some(t) => parse_number(t)
            .ok_or_else(|| FenError::BadFullmoves {
                found: t.to_string(),
            })?
            .max(1),
    };
    Ok((pos, ep))
}

fn parse_number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn parse_placement(
    pos: &mut Position,
    text: &str,
    rules: &Placement,
) -> Result<Option<Bitboard>, FenError> {
    let mut promoted = rules.promoted_marks.then_some(Bitboard::EMPTY);
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::RankCount { found: ranks.len() });
    }
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = Rank::ALL[7 - i];
        let mut file = 0usize;
        for c in rank_text.chars() {
            if c == '~' && file > 0 && file <= 8 {
                let sq = Square::from_coords(File::ALL[file - 1], rank);
                if let Some(marks) = promoted.as_mut().filter(|_| pos.occupied().contains(sq)) {
                    *marks |= sq;
                    continue;
                }
            }
            if let Some(d) = c.to_digit(10).filter(|d| (1..=8).contains(d)) {
                file += d as usize;
            } else if let Some(piece) = Piece::from_fen_char(c).filter(|_| c.is_ascii_alphabetic())
            {
                if file < 8 {
                    let sq = Square::from_coords(File::ALL[file], rank);
                    pos.by_color[piece.color.index()] |= sq;
                    pos.by_role[piece.role.index()] |= sq;
                }
                file += 1;
            } else {
                return Err(FenError::BadCharacter {
                    rank: rank.char(),
                    found: c,
                });
            }
        }
        if file != 8 {
            return Err(FenError::RankLength {
                rank: rank.char(),
                squares: file,
            });
        }
    }
    for color in Color::ALL {
        let kings = pos.pieces(color, Role::King).count();
        let (fewest, most) = rules.kings[color.index()];
        if kings < fewest || kings > most {
            let needs = match (fewest, most) {
                (1, 1) => "exactly one",
                (0, 0) => "none",
                (0, 1) => "at most one",
                _ => "any number",
            };
            return Err(FenError::KingCount {
                color,
                count: kings,
                needs,
            });
        }
    }
    for color in Color::ALL {
        let count = pos.by_color(color).count();
        if count > rules.max_pieces {
            return Err(FenError::TooManyPieces {
                color,
                count,
                most: rules.max_pieces,
            });
        }
        let back = if color == Color::White && rules.white_pawns_on_first_rank {
            Bitboard::rank(Rank::Eighth)
        } else {
            Bitboard::rank(Rank::First) | Bitboard::rank(Rank::Eighth)
        };
        if let Some(square) = (pos.pieces(color, Role::Pawn) & back).first() {
            return Err(FenError::PawnOnBackRank { color, square });
        }
    }
    Ok(promoted)
}

fn parse_castling(pos: &Position, text: &str, variant: Variant) -> Result<Bitboard, FenError> {
    let mut rights = Bitboard::EMPTY;
    if text == "-" {
        return Ok(rights);
    }
    for c in text.chars() {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let back = Bitboard::back_rank(color);
        if !c.is_ascii_alphabetic() {
            return Err(FenError::BadCastlingCharacter { found: c });
        }
        let Some(king) = pos.pieces(color, Role::King).first() else {
            return Err(FenError::CastlingWithoutPieces {
                right: c,
                needs: format!("a {color} king"),
            });
        };
        let rooks = pos.pieces(color, Role::Rook) & back;
        let king_home = king.rank() == color.back_rank();
        let rook = match c.to_ascii_lowercase() {
            'k' | 'q' => {
                let king_side = c.eq_ignore_ascii_case(&'k');
                let side_name = if king_side { "king" } else { "queen" };
                if variant == Variant::Standard {
                    let (rook_file, king_sq) = (
                        if king_side { File::H } else { File::A },
                        Square::from_coords(File::E, color.back_rank()),
                    );
                    let rook_sq = Square::from_coords(rook_file, color.back_rank());
                    if king != king_sq || !rooks.contains(rook_sq) {
                        return Err(FenError::CastlingWithoutPieces {
                            right: c,
                            needs: format!(
                                "the {color} king on {king_sq} and a {color} rook on {rook_sq}"
                            ),
                        });
                    }
                    rook_sq
                } else {
                    let candidate = if king_side {
                        rooks
                            .into_iter()
                            .filter(|r| r.file() > king.file())
                            .max_by_key(|r| r.file())
                    } else {
                        rooks
                            .into_iter()
                            .filter(|r| r.file() < king.file())
                            .min_by_key(|r| r.file())
                    };
                    match candidate {
                        Some(r) if king_home => r,
                        _ => {
                            return Err(FenError::CastlingWithoutPieces {
                                right: c,
                                needs: format!(
                                    "the {color} king on rank {} and a {color} rook on its {side_name} side of that rank",
                                    color.back_rank().char()
                                ),
                            });
                        }
                    }
                }
            }
            'a'..='h' => {
                let file = File::from_char(c.to_ascii_lowercase()).expect("a..h is a file");
                let rook_sq = Square::from_coords(file, color.back_rank());
                if variant == Variant::Standard {
                    if !matches!(file, File::A | File::H) {
                        return Err(FenError::Chess960CastlingInStandard {
                            right: c,
                            file: file.char(),
                        });
                    }
                    let king_sq = Square::from_coords(File::E, color.back_rank());
                    if king != king_sq || !rooks.contains(rook_sq) {
                        return Err(FenError::CastlingWithoutPieces {
                            right: c,
                            needs: format!(
                                "the {color} king on {king_sq} and a {color} rook on {rook_sq}"
                            ),
                        });
                    }
                } else if !king_home || !rooks.contains(rook_sq) || file == king.file() {
                    return Err(FenError::CastlingWithoutPieces {
                        right: c,
                        needs: format!(
                            "a {color} rook on {rook_sq} and the {color} king elsewhere on rank {}",
                            color.back_rank().char()
                        ),
                    });
                }
                rook_sq
            }
            _ => return Err(FenError::BadCastlingCharacter { found: c }),
        };
        let king_side = rook.file() > king.file();
        let same_side = (rights & back)
            .into_iter()
            .any(|r| (r.file() > king.file()) == king_side);
        if same_side {
            return Err(FenError::DuplicateCastling {
                right: c,
                color,
                side: if king_side { "king" } else { "queen" },
            });
        }
        rights |= rook;
    }
    Ok(rights)
}

fn parse_en_passant(pos: &Position, text: &str) -> Result<Option<Square>, FenError> {
    if text == "-" {
        return Ok(None);
    }
    let square = Square::parse(text).ok_or_else(|| FenError::BadEnPassantSquare {
        found: text.to_string(),
    })?;
    let us = pos.turn;
    let them = !us;
    let (ep_rank, pawn_rank, origin_rank) = match us {
        Color::White => (Rank::Sixth, Rank::Fifth, Rank::Seventh),
        Color::Black => (Rank::Third, Rank::Fourth, Rank::Second),
    };
    let impossible = |why: String| FenError::ImpossibleEnPassant { square, why };
    if square.rank() != ep_rank {
        return Err(impossible(format!(
            "with {us} to move it must be on rank {}",
            ep_rank.char()
        )));
    }
    let pawn = Square::from_coords(square.file(), pawn_rank);
    let origin = Square::from_coords(square.file(), origin_rank);
    if !pos.pieces(them, Role::Pawn).contains(pawn) {
        return Err(impossible(format!("there is no {them} pawn on {pawn}")));
    }
    if pos.occupied().contains(square) || pos.occupied().contains(origin) {
        return Err(impossible(format!(
            "{origin} and {square} must both be empty"
        )));
    }
    Ok(Some(square))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_start() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let pos = Position::from_fen(start, Variant::Standard).unwrap();
        assert_eq!(pos.to_fen(), start);
        assert_eq!(pos, Position::new());
    }

    #[test]
    fn defaults_missing_fields() {
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/4K3", Variant::Standard).unwrap();
        assert_eq!(pos.to_fen(), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
    }

    #[test]
    fn drops_en_passant_without_legal_capture() {
        let pos = Position::from_fen(
            "rnbqkbnr/pppp1ppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 2",
            Variant::Standard,
        )
        .unwrap();
        assert_eq!(pos.ep_square(), None);
        assert!(pos.to_fen().contains(" KQkq - 0 2"));
    }

    #[test]
    fn refusals_name_the_field() {
        let cases = [
            ("", "fen"),
            ("8/8/8/8/8/8/8 w - - 0 1", "placement"),
            ("4k3/8/8/8/8/8/8/4K2 w - - 0 1", "placement"),
            ("4k3/8/8/8/8/8/8/4KK2 w - - 0 1", "placement"),
            ("4k3/8/8/8/8/8/8/4X3 w - - 0 1", "placement"),
            ("P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "placement"),
            ("4k3/8/8/8/8/8/8/4K3 x - - 0 1", "side_to_move"),
            ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling"),
            ("4k3/8/8/8/8/8/8/4K3 w - e3 0 1", "en_passant"),
            ("4k3/8/8/8/8/8/8/4K3 w - - x 1", "halfmove_clock"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 -1", "fullmove_number"),
            ("4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", "position"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", "fen"),
        ];
        for (fen, field) in cases {
            let err = Position::from_fen(fen, Variant::Standard).unwrap_err();
            assert_eq!(err.field(), field, "{fen}: {err}");
        }
    }

    #[test]
    fn accepts_impossible_but_well_formed_positions() {
        Position::from_fen("B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1", Variant::Standard).unwrap();
    }

    #[test]
    fn chess960_castling_letters() {
        let fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
        let pos = Position::from_fen(fen, Variant::Chess960).unwrap();
        assert_eq!(pos.castling_fen(), "KQkq");
        let back = Position::from_fen(&pos.to_fen(), Variant::Chess960).unwrap();
        assert_eq!(back, pos);
    }
}

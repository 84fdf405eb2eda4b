//! Reading moves in the variants: UCI with drops (`N@f3`) and king promotions (`e7e8k`),
//! and SAN read as leniently as in standard chess (`Nf3`, `Ng1f3`, `O-O` or `0-0`, a
//! missing `+`), plus drops (`N@f3`, `@e4`, `P@e4`) and `=K`.

use super::{VariantPosition, VariantRules};
use crate::rules::illegal::CastleSide;
use crate::rules::moves::Move;
use crate::rules::piece::Role;
use crate::rules::san::{MAX_SAN_LEN, SanText, parse_syntax_with};
use crate::rules::square::Square;

/// Why move text was refused in a variant position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariantMoveError {
    /// Not a move in UCI or SAN form.
    #[error("'{text}' is not a move: {why}")]
    Syntax {
        /// The text as given (cut to 24 characters).
        text: String,
        /// What is wrong with its form.
        why: &'static str,
    },
    /// A well-formed move that this position does not allow.
    #[error("{text} is not a legal move in this {variant} position")]
    Illegal {
        /// The text as given.
        text: String,
        /// The variant's lichess key.
        variant: &'static str,
    },
    /// SAN that fits more than one legal move.
    #[error("{text} is ambiguous: it could be {}", candidates.join(" or "))]
    Ambiguous {
        /// The text as given.
        text: String,
        /// The SAN of every legal move it fits.
        candidates: Vec<String>,
    },
}

impl<R: VariantRules> VariantPosition<R> {
    /// Reads a move in UCI or SAN.
    pub fn parse_move(&self, text: &str) -> Result<Move, VariantMoveError> {
        let text = text.trim();
        if looks_like_uci(text) {
            self.parse_uci(text)
        } else {
            self.parse_san(text)
        }
    }

    /// Reads UCI: `e2e4`, `e7e8q`, `e7e8k` (antichess), `N@f3` (crazyhouse); castling as
    /// the king's two-square step or king-takes-rook.
    pub fn parse_uci(&self, text: &str) -> Result<Move, VariantMoveError> {
        let syntax = |why| syntax_error(text, why);
        let illegal = || illegal_error::<R>(text);
        let legal = self.legal_moves();
        if let Some((piece, square)) = text.split_once('@') {
            let m = parse_drop(piece, square)
                .ok_or_else(|| syntax("a drop is a piece letter, @ and a square (N@f3)"))?;
            return legal.iter().find(|&&l| l == m).copied().ok_or_else(illegal);
        }
        if !text.is_ascii() || !(4..=5).contains(&text.len()) {
            return Err(syntax(
                "expected a from square, a to square and an optional promotion letter (e2e4, e7e8q)",
            ));
        }
        let from = Square::parse(&text[0..2]).ok_or_else(|| syntax("no from square"))?;
        let to = Square::parse(&text[2..4]).ok_or_else(|| syntax("no to square"))?;
        let promotion = match text.as_bytes().get(4) {
            None => None,
            Some(&c) => Some(
                Role::from_char(c as char)
                    .filter(|r| *r != Role::Pawn)
                    .ok_or_else(|| syntax("the promotion letter must be q, r, b, n or k"))?,
            ),
        };
        legal
            .iter()
            .find(|m| {
                !m.is_castle()
                    && !m.is_drop()
                    && m.from == from
                    && m.to == to
                    && m.promotion() == promotion
            })
            .or_else(|| {
                legal.iter().find(|m| {
                    m.is_castle()
                        && promotion.is_none()
                        && m.from == from
                        && (m.to == to || m.king_to() == to)
                })
            })
            .copied()
            .ok_or_else(illegal)
    }

    /// Reads SAN, leniently; an ambiguous move lists its candidates.
    pub fn parse_san(&self, text: &str) -> Result<Move, VariantMoveError> {
        let syntax = |why| syntax_error(text, why);
        let illegal = || illegal_error::<R>(text);
        if text.len() > MAX_SAN_LEN {
            return Err(syntax("too long"));
        }
        let legal = self.legal_moves();
        let core = text.trim_end_matches(['+', '#', '!', '?']);
        if let Some((piece, square)) = core.split_once('@') {
            let piece = if piece.is_empty() { "P" } else { piece };
            let m = parse_drop(piece, square)
                .ok_or_else(|| syntax("a drop is a piece letter, @ and a square (N@f3, @e4)"))?;
            return legal.iter().find(|&&l| l == m).copied().ok_or_else(illegal);
        }
        let parsed = parse_syntax_with(text, true).map_err(syntax)?;
        let candidates: Vec<Move> = match parsed {
            SanText::Castle(side) => legal
                .iter()
                .filter(|m| m.is_castle() && m.is_king_side_castle() == (side == CastleSide::King))
                .copied()
                .collect(),
            SanText::Normal {
                role,
                file,
                rank,
                to,
                promotion,
            } => legal
                .iter()
                .filter(|m| {
                    !m.is_castle()
                        && !m.is_drop()
                        && m.role == role
                        && m.to == to
                        && file.is_none_or(|f| m.from.file() == f)
                        && rank.is_none_or(|r| m.from.rank() == r)
                        && m.promotion() == promotion
                })
                .copied()
                .collect(),
        };
        match candidates.as_slice() {
            [m] => Ok(*m),
            [] => Err(illegal()),
            many => Err(VariantMoveError::Ambiguous {
                text: text.to_string(),
                candidates: many.iter().map(|&m| self.san(m)).collect(),
            }),
        }
    }
}

fn syntax_error(text: &str, why: &'static str) -> VariantMoveError {
    VariantMoveError::Syntax {
        text: text.chars().take(24).collect(),
        why,
    }
}

fn illegal_error<R: VariantRules>(text: &str) -> VariantMoveError {
    VariantMoveError::Illegal {
        text: text.to_string(),
        variant: R::KEY,
    }
}

/// `N`, `@`-less square: a drop of that piece (never a king).
fn parse_drop(piece: &str, square: &str) -> Option<Move> {
    let mut letters = piece.chars();
    let letter = letters.next()?;
    if letters.next().is_some() {
        return None;
    }
    let role = Role::from_char(letter).filter(|r| *r != Role::King)?;
    Some(Move::drop(role, Square::parse(square)?))
}

/// UCI shape: two squares and an optional promotion letter, or a drop.
fn looks_like_uci(text: &str) -> bool {
    let b = text.as_bytes();
    let square = |i: usize| {
        b.get(i).is_some_and(|c| (b'a'..=b'h').contains(c))
            && b.get(i + 1).is_some_and(|c| (b'1'..=b'8').contains(c))
    };
    (b.len() == 4 || b.len() == 5) && square(0) && square(2)
}

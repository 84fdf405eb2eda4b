//! UCI move notation (`e2e4`, `e7e8q`). Castling is written as the king's two-square step
//! in standard chess (`e1g1`) and as king-takes-rook in Chess960 (`e1h1`); both are
//! accepted where they are unambiguous.

use super::illegal::{CastleSide, IllegalMove, castling_side_of};
use super::moves::Move;
use super::piece::Role;
use super::position::{Position, Variant};
use super::square::Square;

/// Why a UCI string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UciError {
    /// Not two squares and an optional promotion letter.
    #[error("'{text}' is not a UCI move: {why}")]
    Syntax {
        /// The text as given.
        text: String,
        /// What is wrong with its form.
        why: &'static str,
    },
    /// Well-formed, but not a legal move here.
    #[error("illegal move {text}: {reason}")]
    Illegal {
        /// The text as given.
        text: String,
        /// Why the move is not legal.
        reason: IllegalMove,
    },
}

/// A UCI move as written, before it is matched against a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UciText {
    /// The first square.
    pub from: Square,
    /// The second square (for castling, the king's target or the rook's square).
    pub to: Square,
    /// The promotion letter's piece, if any.
    pub promotion: Option<Role>,
}

impl UciText {
    /// Parses the syntax only: two squares and an optional promotion letter.
    pub fn parse(text: &str) -> Result<UciText, UciError> {
        let syntax = |why| UciError::Syntax {
            text: text.chars().take(16).collect(),
            why,
        };
        if text == "0000" {
            return Err(syntax("null moves are not moves in a game"));
        }
        if !text.is_ascii() || !(4..=5).contains(&text.len()) {
            return Err(syntax(
                "expected 4 or 5 characters: from square, to square, optional promotion (e2e4, e7e8q)",
            ));
        }
        let from = Square::parse(&text[0..2])
            .ok_or_else(|| syntax("the first two characters are not a square"))?;
        let to = Square::parse(&text[2..4])
            .ok_or_else(|| syntax("characters 3 and 4 are not a square"))?;
        let promotion = match text.as_bytes().get(4) {
            None => None,
            Some(&c) => match Role::from_char(c as char) {
                Some(r @ (Role::Queen | Role::Rook | Role::Bishop | Role::Knight)) => Some(r),
                _ => return Err(syntax("the promotion letter must be q, r, b or n")),
            },
        };
        if from == to {
            return Err(syntax("from and to are the same square"));
        }
        Ok(UciText {
            from,
            to,
            promotion,
        })
    }

    /// Whether a string has UCI shape (used to route text between UCI and SAN).
    pub fn looks_like(text: &str) -> bool {
        let b = text.as_bytes();
        (b.len() == 4 || b.len() == 5)
            && matches!(b[0], b'a'..=b'h')
            && matches!(b[1], b'1'..=b'8')
            && matches!(b[2], b'a'..=b'h')
            && matches!(b[3], b'1'..=b'8')
    }
}

impl Position {
    /// The move's UCI text in this position's variant: castling is the king's two-square
    /// step in standard chess and king-takes-rook in Chess960.
    ///
    /// ```
    /// use chess_service::rules::{Position, Variant};
    ///
    /// let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    /// let standard = Position::from_fen(fen, Variant::Standard).unwrap();
    /// let castle = standard.parse_san("O-O").unwrap();
    /// assert_eq!(standard.uci(castle), "e1g1");
    /// let chess960 = Position::from_fen(fen, Variant::Chess960).unwrap();
    /// assert_eq!(chess960.uci(chess960.parse_san("O-O").unwrap()), "e1h1");
    /// ```
    pub fn uci(&self, m: Move) -> String {
        let to = match (m.is_castle(), self.variant) {
            (true, Variant::Standard) => m.king_to(),
            _ => m.to,
        };
        match m.promotion() {
            Some(p) => format!("{}{}{}", m.from, to, p.char()),
            None => format!("{}{}", m.from, to),
        }
    }

    /// Parses UCI text into a legal move of this position. Text that is not UCI and a
    /// move the position does not allow are different errors; the latter says why.
    ///
    /// ```
    /// use chess_service::rules::{Position, UciError};
    ///
    /// let pos = Position::new();
    /// let m = pos.parse_uci("e2e4").unwrap();
    /// assert_eq!(pos.san(m), "e4");
    /// assert!(matches!(pos.parse_uci("e2e5"), Err(UciError::Illegal { .. })));
    /// assert!(matches!(pos.parse_uci("hello"), Err(UciError::Syntax { .. })));
    /// ```
    pub fn parse_uci(&self, text: &str) -> Result<Move, UciError> {
        let uci = UciText::parse(text)?;
        self.resolve_uci(uci).map_err(|reason| UciError::Illegal {
            text: text.to_string(),
            reason,
        })
    }

    fn resolve_uci(&self, uci: UciText) -> Result<Move, IllegalMove> {
        let legal = self.legal_moves();
        // A literal move first: in Chess960 `f1g1` is a king step when one is legal.
        if let Some(m) = legal.iter().find(|m| {
            !m.is_castle() && m.from == uci.from && m.to == uci.to && m.promotion() == uci.promotion
        }) {
            return Ok(*m);
        }
        if let Some(side) =
            castling_side_of(self, uci.from, uci.to).filter(|_| uci.promotion.is_none())
        {
            let castle = legal.iter().find(|m| {
                m.is_castle()
                    && m.from == uci.from
                    && (m.to == uci.to || m.king_to() == uci.to)
                    && (m.is_king_side_castle() == (side == CastleSide::King))
            });
            if let Some(m) = castle {
                return Ok(*m);
            }
            // The text is a castling attempt if it is king-takes-rook or lands on the
            // castling square; otherwise it is an ordinary (illegal) king move.
            let own_rook = self.pieces(self.turn(), Role::Rook).contains(uci.to);
            let castling_square = self
                .castling_rook(self.turn(), side == CastleSide::King)
                .map(|rook| {
                    Move::new(Role::King, uci.from, rook, super::moves::MoveKind::Castle).king_to()
                });
            let attempt = own_rook || castling_square == Some(uci.to) || castling_square.is_none();
            if let Some(reason) = self.explain_castling(side).filter(|_| attempt) {
                return Err(reason);
            }
        }
        Err(self.explain_illegal(uci.from, uci.to, uci.promotion))
    }
}

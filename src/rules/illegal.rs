//! Why a move is illegal, in words a person can act on.

use std::fmt;

use super::attacks::{self, Magic, Sliders};
use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind};
use super::piece::{Piece, Role};
use super::position::Position;
use super::square::{Color, Rank, Square};

/// King side (towards the h-file, O-O) or queen side (O-O-O).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastleSide {
    /// Towards the h-file: O-O.
    King,
    /// Towards the a-file: O-O-O.
    Queen,
}

impl CastleSide {
    /// "king side" or "queen side", for messages.
    pub fn name(self) -> &'static str {
        match self {
            CastleSide::King => "king side",
            CastleSide::Queen => "queen side",
        }
    }
}

/// A piece on a square, for messages ("the black bishop on b4").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacedPiece {
    /// The piece.
    pub piece: Piece,
    /// Where it stands.
    pub square: Square,
}

impl fmt::Display for PlacedPiece {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} {} on {}",
            self.piece.color, self.piece.role, self.square
        )
    }
}

/// The reason a move is not legal in a position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// The move starts from an empty square.
    #[error("there is no piece on {square}")]
    NoPiece {
        /// The empty square.
        square: Square,
    },
    /// The piece on the start square is the opponent's.
    #[error("{piece} belongs to {owner}, and it is {turn}'s turn")]
    NotYourPiece {
        /// The piece that was to move.
        piece: PlacedPiece,
        /// Its colour.
        owner: Color,
        /// The side to move.
        turn: Color,
    },
    /// The piece does not move that way (or its path is blocked).
    #[error("{piece} cannot move to {to}")]
    CannotMoveThere {
        /// The piece that was to move.
        piece: PlacedPiece,
        /// Where it was to go.
        to: Square,
    },
    /// The target square holds a piece of the side to move.
    #[error("{to} is occupied by your own {role}")]
    OwnPieceOnTarget {
        /// The target square.
        to: Square,
        /// The piece standing there.
        role: Role,
    },
    /// A pawn reaching the last rank without saying what it becomes.
    #[error("a pawn reaching {to} must promote: add q, r, b or n (for example {from}{to}q)")]
    PromotionRequired {
        /// The pawn's square.
        from: Square,
        /// The last-rank square.
        to: Square,
    },
    /// A promotion piece given for a move that is not a pawn reaching the last rank.
    #[error("only a pawn reaching the last rank can promote")]
    NotAPromotion,
    /// A promotion to a pawn or a king.
    #[error("a pawn cannot promote to a {role}")]
    BadPromotion {
        /// The role asked for.
        role: Role,
    },
    /// The move would leave (or put) the mover's king in check: a pin, or no answer to a
    /// check.
    #[error("it would leave your king on {king} in check from {attacker}")]
    LeavesKingInCheck {
        /// The king's square after the move.
        king: Square,
        /// A piece that would then give check.
        attacker: PlacedPiece,
    },
    /// SAN named a piece kind none of which can reach the square.
    #[error("no {role} can move to {to}")]
    NoPieceReaches {
        /// The piece kind named.
        role: Role,
        /// The target square.
        to: Square,
    },
    /// Castling on a side whose right is gone.
    #[error("{color} has no {} castling right", side.name())]
    NoCastlingRight {
        /// The side to move.
        color: Color,
        /// The side castled towards.
        side: CastleSide,
    },
    /// Castling with a piece between king and rook or on their targets.
    #[error("castling {}: {square} is occupied by {occupant}", side.name())]
    CastlingBlocked {
        /// The side castled towards.
        side: CastleSide,
        /// The first square in the way.
        square: Square,
        /// The piece standing there.
        occupant: PlacedPiece,
    },
    /// Castling while in check.
    #[error("cannot castle out of check: {attacker} attacks the king")]
    CastlingOutOfCheck {
        /// A piece giving check.
        attacker: PlacedPiece,
    },
    /// Castling across a square the opponent attacks.
    #[error("castling through {square}, which {attacker} attacks")]
    CastlingThroughCheck {
        /// The attacked square the king would cross.
        square: Square,
        /// A piece attacking it.
        attacker: PlacedPiece,
    },
    /// Castling onto a square the opponent attacks.
    #[error("castling into check on {square}, which {attacker} attacks")]
    CastlingIntoCheck {
        /// The king's target square.
        square: Square,
        /// A piece attacking it.
        attacker: PlacedPiece,
    },
    /// The game has ended: no move is legal any more.
    #[error("the game is over")]
    GameOver,
}

impl Position {
    fn placed(&self, square: Square) -> Option<PlacedPiece> {
        self.piece_at(square)
            .map(|piece| PlacedPiece { piece, square })
    }

    fn first_attacker(&self, sq: Square, by: Color, occupied: Bitboard) -> Option<PlacedPiece> {
        self.attackers_with::<Magic>(sq, by, occupied)
            .first()
            .and_then(|s| self.placed(s))
    }

    /// Whether the piece on `from` could reach `to` by its movement pattern alone
    /// (ignoring whether the own king would be left in check). En passant counts only
    /// where the position has an en passant square.
    pub(crate) fn pattern_reaches(&self, from: Square, to: Square) -> bool {
        let Some(piece) = self.piece_at(from) else {
            return false;
        };
        let occ = self.occupied();
        if self.by_color(piece.color).contains(to) {
            return false;
        }
        match piece.role {
            Role::Pawn => {
                let us = piece.color;
                let step = if us == Color::White { 8 } else { -8 };
                let single = from.offset(step);
                if attacks::pawn_attacks(us, from).contains(to) {
                    return self.by_color(!us).contains(to) || self.ep_square == Some(to);
                }
                if single == Some(to) {
                    return !occ.contains(to);
                }
                let start = us.relative_rank(Rank::Second);
                from.rank() == start
                    && single.and_then(|s| s.offset(step)) == Some(to)
                    && !occ.contains(to)
                    && single.is_some_and(|s| !occ.contains(s))
            }
            Role::Knight => attacks::knight_attacks(from).contains(to),
            Role::Bishop => Magic::bishop(from, occ).contains(to),
            Role::Rook => Magic::rook(from, occ).contains(to),
            Role::Queen => Magic::queen(from, occ).contains(to),
            Role::King => attacks::king_attacks(from).contains(to),
        }
    }

    /// Explains why moving the piece on `from` to `to` (promoting to `promotion`) is not
    /// legal. Castling is explained by [`Position::explain_castling`].
    pub fn explain_illegal(
        &self,
        from: Square,
        to: Square,
        promotion: Option<Role>,
    ) -> IllegalMove {
        let us = self.turn;
        let Some(placed) = self.placed(from) else {
            return IllegalMove::NoPiece { square: from };
        };
        if placed.piece.color != us {
            return IllegalMove::NotYourPiece {
                piece: placed,
                owner: placed.piece.color,
                turn: us,
            };
        }
        if let Some(own) = self.piece_at(to).filter(|p| p.color == us) {
            return IllegalMove::OwnPieceOnTarget { to, role: own.role };
        }
        if !self.pattern_reaches(from, to) {
            return IllegalMove::CannotMoveThere { piece: placed, to };
        }
        let reaches_last = placed.piece.role == Role::Pawn && to.rank() == (!us).back_rank();
        match (reaches_last, promotion) {
            (true, None) => return IllegalMove::PromotionRequired { from, to },
            (false, Some(_)) => return IllegalMove::NotAPromotion,
            (true, Some(role)) if matches!(role, Role::Pawn | Role::King) => {
                return IllegalMove::BadPromotion { role };
            }
            _ => {}
        }
        // The pattern fits, so the king is what stops it: play it and see who attacks.
        let kind = if placed.piece.role == Role::Pawn && self.ep_square == Some(to) {
            MoveKind::EnPassant
        } else {
            promotion.map_or(MoveKind::Normal, MoveKind::promotion)
        };
        let mut after = *self;
        after.play_unchecked::<Magic>(Move::new(placed.piece.role, from, to, kind));
        let king = after.king(us);
        match after.first_attacker(king, !us, after.occupied()) {
            Some(attacker) => IllegalMove::LeavesKingInCheck { king, attacker },
            None => IllegalMove::CannotMoveThere { piece: placed, to },
        }
    }

    /// Explains why castling to `side` is not legal here (or `None` if it is).
    pub fn explain_castling(&self, side: CastleSide) -> Option<IllegalMove> {
        let us = self.turn;
        let Some(rook) = self.castling_rook(us, side == CastleSide::King) else {
            return Some(IllegalMove::NoCastlingRight { color: us, side });
        };
        let king = self.king(us);
        let m = Move::new(Role::King, king, rook, MoveKind::Castle);
        if let Some(attacker) = self.first_attacker(king, !us, self.occupied()) {
            return Some(IllegalMove::CastlingOutOfCheck { attacker });
        }
        let (king_to, rook_to) = (m.king_to(), m.rook_to());
        let must_be_empty =
            (attacks::between(king, king_to) | king_to | attacks::between(rook, rook_to) | rook_to)
                .without(king)
                .without(rook);
        if let Some(square) = (must_be_empty & self.occupied()).first() {
            let occupant = self.placed(square).expect("the square is occupied");
            return Some(IllegalMove::CastlingBlocked {
                side,
                square,
                occupant,
            });
        }
        let lifted = self.occupied().without(king).without(rook);
        for square in attacks::between(king, king_to) | king_to {
            if let Some(attacker) = self.first_attacker(square, !us, lifted) {
                return Some(if square == king_to {
                    IllegalMove::CastlingIntoCheck { square, attacker }
                } else {
                    IllegalMove::CastlingThroughCheck { square, attacker }
                });
            }
        }
        None
    }
}

/// Whether `from`..`to` is the text of a castling attempt by the king on `from`:
/// king-takes-own-rook, or a king move of two or more files along its back rank.
pub(crate) fn castling_side_of(pos: &Position, from: Square, to: Square) -> Option<CastleSide> {
    let us = pos.turn();
    if pos.king(us) != from || from.rank() != us.back_rank() || to.rank() != from.rank() {
        return None;
    }
    let side = if to.file() > from.file() {
        CastleSide::King
    } else {
        CastleSide::Queen
    };
    let own_rook = pos.pieces(us, Role::Rook).contains(to);
    let distance = (to.file() as i8 - from.file() as i8).abs();
    (own_rook || distance >= 2).then_some(side)
}

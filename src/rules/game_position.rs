//! `GamePosition`: the position a game is played in, standard chess and Chess960
//! ([`Position`]) or one of lichess's variants ([`AnyPosition`]), and [`GameRules`], which
//! of them a game follows.
//!
//! A game dispatches once per call on this enum; perft and the move generators below it
//! stay monomorphised per variant, so standard chess pays nothing in its hot paths.

use super::fen::FenError;
use super::moves::{Move, MoveList};
use super::position::{Position, Variant};
use super::san::MoveTextError;
use super::square::Color;
use super::variant::{AnyPosition, VariantKind};

/// The rules a game is played by: standard chess or Chess960, or a lichess variant (whose
/// castling mode, standard or Chess960, its start FEN decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameRules {
    /// Standard chess or Chess960.
    Chess(Variant),
    /// One of lichess's variants.
    Lichess(VariantKind),
}

impl GameRules {
    /// The variant's name as a PGN `[Variant]` tag and messages write it (`Standard`,
    /// `Chess960`, `Atomic`, `King of the Hill`).
    pub fn name(self) -> &'static str {
        match self {
            GameRules::Chess(Variant::Standard) => "Standard",
            GameRules::Chess(Variant::Chess960) => "Chess960",
            GameRules::Lichess(kind) => kind.name(),
        }
    }

    /// Whether the 75-move rule and the 50-move claim apply (not in crazyhouse).
    pub fn has_move_count_rule(self) -> bool {
        match self {
            GameRules::Chess(_) => true,
            GameRules::Lichess(kind) => kind.has_move_count_rule(),
        }
    }
}

impl From<Variant> for GameRules {
    fn from(variant: Variant) -> GameRules {
        GameRules::Chess(variant)
    }
}

impl std::fmt::Display for GameRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A position of a game, in whichever rules it follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GamePosition {
    /// Standard chess or Chess960.
    Chess(Position),
    /// A lichess variant.
    Lichess(AnyPosition),
}

impl From<Position> for GamePosition {
    fn from(pos: Position) -> GamePosition {
        GamePosition::Chess(pos)
    }
}

impl From<AnyPosition> for GamePosition {
    fn from(pos: AnyPosition) -> GamePosition {
        GamePosition::Lichess(pos)
    }
}

impl GamePosition {
    /// A position of `rules` from its FEN.
    pub fn from_fen(rules: GameRules, fen: &str) -> Result<GamePosition, FenError> {
        Ok(match rules {
            GameRules::Chess(variant) => GamePosition::Chess(Position::from_fen(fen, variant)?),
            GameRules::Lichess(kind) => GamePosition::Lichess(AnyPosition::from_fen(kind, fen)?),
        })
    }

    /// The rules this position follows.
    pub fn rules(&self) -> GameRules {
        match self {
            GamePosition::Chess(p) => GameRules::Chess(p.variant()),
            GamePosition::Lichess(p) => GameRules::Lichess(p.kind()),
        }
    }

    /// The standard chess or Chess960 position, if that is what this is.
    pub fn as_chess(&self) -> Option<&Position> {
        match self {
            GamePosition::Chess(p) => Some(p),
            GamePosition::Lichess(_) => None,
        }
    }

    /// The placement, side to move, castling rights, en passant square and clocks (a
    /// variant's extra state, pockets or checks given, aside).
    pub fn board(&self) -> &Position {
        match self {
            GamePosition::Chess(p) => p,
            GamePosition::Lichess(p) => p.board(),
        }
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.board().turn()
    }

    /// Plies since the last capture or pawn move.
    pub fn halfmoves(&self) -> u32 {
        self.board().halfmoves()
    }

    /// The move number (1 at the start, after each black move one more).
    pub fn fullmoves(&self) -> u32 {
        self.board().fullmoves()
    }

    /// The FEN (a variant's pockets, promoted marks and checks given included).
    pub fn to_fen(&self) -> String {
        match self {
            GamePosition::Chess(p) => p.to_fen(),
            GamePosition::Lichess(p) => p.to_fen(),
        }
    }

    /// Every legal move (none once a variant's own ending has come).
    pub fn legal_moves(&self) -> MoveList {
        match self {
            GamePosition::Chess(p) => p.legal_moves(),
            GamePosition::Lichess(p) => p.legal_moves(),
        }
    }

    /// The legal moves in a deterministic order that does not depend on the generator:
    /// the store's compact move encoding indexes into it.
    pub fn legal_moves_sorted(&self) -> MoveList {
        match self {
            GamePosition::Chess(p) => p.legal_moves_sorted(),
            GamePosition::Lichess(p) => {
                let mut list = p.legal_moves();
                list.sort();
                list
            }
        }
    }

    /// Whether a legal move exists.
    pub fn has_legal_move(&self) -> bool {
        match self {
            GamePosition::Chess(p) => p.has_legal_move(),
            GamePosition::Lichess(p) => !p.legal_moves().is_empty(),
        }
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        match self {
            GamePosition::Chess(p) => p.is_check(),
            GamePosition::Lichess(p) => p.is_check(),
        }
    }

    /// Whether `m` (a legal move) captures.
    pub fn is_capture(&self, m: Move) -> bool {
        match self {
            GamePosition::Chess(p) => p.is_capture(m),
            GamePosition::Lichess(p) => p.is_capture(m),
        }
    }

    /// Whether `m` (a legal move) resets the fifty-move counter.
    pub fn is_zeroing(&self, m: Move) -> bool {
        match self {
            GamePosition::Chess(p) => p.is_zeroing(m),
            GamePosition::Lichess(p) => !m.is_drop() && p.board().is_zeroing(m),
        }
    }

    /// `color` cannot win by its rules' material rule (standard chess: it cannot mate with
    /// what it has; a variant: python-chess's rule for that variant).
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        match self {
            GamePosition::Chess(p) => p.has_insufficient_material(color),
            GamePosition::Lichess(p) => p.has_insufficient_material(color),
        }
    }

    /// Neither side can win by the material rule.
    pub fn is_insufficient_material(&self) -> bool {
        match self {
            GamePosition::Chess(p) => p.is_insufficient_material(),
            GamePosition::Lichess(p) => Color::ALL.iter().all(|&c| p.has_insufficient_material(c)),
        }
    }

    /// The move in UCI (drops as `N@f3`).
    pub fn uci(&self, m: Move) -> String {
        match self {
            GamePosition::Chess(p) => p.uci(m),
            GamePosition::Lichess(p) => p.uci(m),
        }
    }

    /// The move in SAN, with the suffixes python-chess writes in the variant.
    pub fn san(&self, m: Move) -> String {
        match self {
            GamePosition::Chess(p) => p.san(m),
            GamePosition::Lichess(p) => p.san(m),
        }
    }

    /// Reads a move in UCI or SAN.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveTextError> {
        match self {
            GamePosition::Chess(p) => p.parse_move(text),
            GamePosition::Lichess(p) => p.parse_move(text).map_err(MoveTextError::Variant),
        }
    }

    /// Whether `m` is legal here.
    pub fn is_legal(&self, m: Move) -> bool {
        self.legal_moves().contains(&m)
    }

    /// The position after `m`, a legal move.
    pub fn after(&self, m: Move) -> GamePosition {
        match self {
            GamePosition::Chess(p) => GamePosition::Chess(p.after(m)),
            GamePosition::Lichess(p) => GamePosition::Lichess(p.after(m)),
        }
    }

    /// Same position for the repetition rule: the placement, side to move, castling
    /// rights, legal en passant square, and a variant's pockets, promoted pieces and
    /// checks given. Clocks are ignored.
    pub fn same_repetition_identity(&self, other: &GamePosition) -> bool {
        match (self, other) {
            (GamePosition::Chess(a), GamePosition::Chess(b)) => a.same_repetition_identity(b),
            (GamePosition::Lichess(a), GamePosition::Lichess(b)) => a.same_repetition_identity(b),
            _ => false,
        }
    }
}

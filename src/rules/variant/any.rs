//! One type for "a position in some lichess variant", chosen at run time: the service
//! reads the variant from a request and then works on an [`AnyPosition`]. Each method
//! dispatches once to the variant's own monomorphised [`VariantPosition`], so a perft or a
//! move generation below the call never branches on the variant.

use std::sync::atomic::AtomicBool;

use super::{
    Antichess, Atomic, Crazyhouse, Horde, KingOfTheHill, RacingKings, ThreeCheck, VariantMoveError,
    VariantOutcome, VariantPosition, VariantRules,
};
use crate::rules::fen::FenError;
use crate::rules::moves::{Move, MoveList};
use crate::rules::perft::{PerftRoot, PerftStopped};
use crate::rules::position::Position;
use crate::rules::square::Color;

/// lichess's variants beyond standard chess and Chess960. (Chess960 castling is a mode of
/// every variant's position, read from its FEN, not a variant of its own.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VariantKind {
    /// Captured pieces go to the capturer's pocket and may be dropped.
    Crazyhouse,
    /// Captures explode.
    Atomic,
    /// Captures are compulsory; losing every piece wins.
    Antichess,
    /// White's 36 pawns against black's army.
    Horde,
    /// No checks; the first king on the eighth rank wins.
    RacingKings,
    /// A king on d4, e4, d5 or e5 wins.
    KingOfTheHill,
    /// The third check wins.
    ThreeCheck,
}

impl VariantKind {
    /// Every variant, in the proto's order.
    pub const ALL: [VariantKind; 7] = [
        VariantKind::Crazyhouse,
        VariantKind::Atomic,
        VariantKind::Antichess,
        VariantKind::Horde,
        VariantKind::RacingKings,
        VariantKind::KingOfTheHill,
        VariantKind::ThreeCheck,
    ];

    /// lichess's key (`atomic`, `kingOfTheHill`).
    pub fn key(self) -> &'static str {
        match self {
            VariantKind::Crazyhouse => Crazyhouse::KEY,
            VariantKind::Atomic => Atomic::KEY,
            VariantKind::Antichess => Antichess::KEY,
            VariantKind::Horde => Horde::KEY,
            VariantKind::RacingKings => RacingKings::KEY,
            VariantKind::KingOfTheHill => KingOfTheHill::KEY,
            VariantKind::ThreeCheck => ThreeCheck::KEY,
        }
    }

    /// The name people read, as lichess writes it in a PGN's `[Variant]` tag.
    pub fn name(self) -> &'static str {
        match self {
            VariantKind::Crazyhouse => "Crazyhouse",
            VariantKind::Atomic => "Atomic",
            VariantKind::Antichess => "Antichess",
            VariantKind::Horde => "Horde",
            VariantKind::RacingKings => "Racing Kings",
            VariantKind::KingOfTheHill => "King of the Hill",
            VariantKind::ThreeCheck => "Three-check",
        }
    }

    /// Reads a variant's name as PGN `[Variant]` tags and APIs write it: lichess's name
    /// (`Racing Kings`) or key (`racingKings`), in any case, with or without spaces,
    /// hyphens and underscores, and the common aliases (`3check`, `koth`).
    pub fn from_name(name: &str) -> Option<VariantKind> {
        Some(
            match crate::rules::pgn_read::variant_name_key(name).as_str() {
                "crazyhouse" | "zh" => VariantKind::Crazyhouse,
                "atomic" => VariantKind::Atomic,
                "antichess" | "giveaway" | "suicide" => VariantKind::Antichess,
                "horde" => VariantKind::Horde,
                "racingkings" => VariantKind::RacingKings,
                "kingofthehill" | "koth" => VariantKind::KingOfTheHill,
                "threecheck" | "3check" => VariantKind::ThreeCheck,
                _ => return None,
            },
        )
    }

    /// Whether the 75-move rule (and with it the 50-move claim) applies: not in crazyhouse,
    /// where drops keep material on the board.
    pub fn has_move_count_rule(self) -> bool {
        self != VariantKind::Crazyhouse
    }
}

impl std::fmt::Display for VariantKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A position in one of the lichess variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AnyPosition {
    /// A crazyhouse position.
    Crazyhouse(VariantPosition<Crazyhouse>),
    /// An atomic position.
    Atomic(VariantPosition<Atomic>),
    /// An antichess position.
    Antichess(VariantPosition<Antichess>),
    /// A horde position.
    Horde(VariantPosition<Horde>),
    /// A Racing Kings position.
    RacingKings(VariantPosition<RacingKings>),
    /// A King of the Hill position.
    KingOfTheHill(VariantPosition<KingOfTheHill>),
    /// A three-check position.
    ThreeCheck(VariantPosition<ThreeCheck>),
}

/// Runs `$body` with `$p` bound to the variant's own position.
macro_rules! dispatch {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPosition::Crazyhouse($p) => $body,
            AnyPosition::Atomic($p) => $body,
            AnyPosition::Antichess($p) => $body,
            AnyPosition::Horde($p) => $body,
            AnyPosition::RacingKings($p) => $body,
            AnyPosition::KingOfTheHill($p) => $body,
            AnyPosition::ThreeCheck($p) => $body,
        }
    };
}

/// Runs `$body` with `$p` bound to the variant's own position and wraps what it returns
/// (a position of the same variant) back up.
macro_rules! map {
    ($self:expr, $p:ident => $body:expr) => {
        match $self {
            AnyPosition::Crazyhouse($p) => AnyPosition::Crazyhouse($body),
            AnyPosition::Atomic($p) => AnyPosition::Atomic($body),
            AnyPosition::Antichess($p) => AnyPosition::Antichess($body),
            AnyPosition::Horde($p) => AnyPosition::Horde($body),
            AnyPosition::RacingKings($p) => AnyPosition::RacingKings($body),
            AnyPosition::KingOfTheHill($p) => AnyPosition::KingOfTheHill($body),
            AnyPosition::ThreeCheck($p) => AnyPosition::ThreeCheck($body),
        }
    };
}

impl AnyPosition {
    /// The variant's starting position.
    pub fn start(kind: VariantKind) -> AnyPosition {
        match kind {
            VariantKind::Crazyhouse => AnyPosition::Crazyhouse(VariantPosition::new()),
            VariantKind::Atomic => AnyPosition::Atomic(VariantPosition::new()),
            VariantKind::Antichess => AnyPosition::Antichess(VariantPosition::new()),
            VariantKind::Horde => AnyPosition::Horde(VariantPosition::new()),
            VariantKind::RacingKings => AnyPosition::RacingKings(VariantPosition::new()),
            VariantKind::KingOfTheHill => AnyPosition::KingOfTheHill(VariantPosition::new()),
            VariantKind::ThreeCheck => AnyPosition::ThreeCheck(VariantPosition::new()),
        }
    }

    /// Parses a FEN of variant `kind` (castling as standard FEN, X-FEN or Shredder-FEN).
    pub fn from_fen(kind: VariantKind, fen: &str) -> Result<AnyPosition, FenError> {
        Ok(match kind {
            VariantKind::Crazyhouse => AnyPosition::Crazyhouse(VariantPosition::from_fen(fen)?),
            VariantKind::Atomic => AnyPosition::Atomic(VariantPosition::from_fen(fen)?),
            VariantKind::Antichess => AnyPosition::Antichess(VariantPosition::from_fen(fen)?),
            VariantKind::Horde => AnyPosition::Horde(VariantPosition::from_fen(fen)?),
            VariantKind::RacingKings => AnyPosition::RacingKings(VariantPosition::from_fen(fen)?),
            VariantKind::KingOfTheHill => {
                AnyPosition::KingOfTheHill(VariantPosition::from_fen(fen)?)
            }
            VariantKind::ThreeCheck => AnyPosition::ThreeCheck(VariantPosition::from_fen(fen)?),
        })
    }

    /// Which variant this is.
    pub fn kind(&self) -> VariantKind {
        match self {
            AnyPosition::Crazyhouse(_) => VariantKind::Crazyhouse,
            AnyPosition::Atomic(_) => VariantKind::Atomic,
            AnyPosition::Antichess(_) => VariantKind::Antichess,
            AnyPosition::Horde(_) => VariantKind::Horde,
            AnyPosition::RacingKings(_) => VariantKind::RacingKings,
            AnyPosition::KingOfTheHill(_) => VariantKind::KingOfTheHill,
            AnyPosition::ThreeCheck(_) => VariantKind::ThreeCheck,
        }
    }

    /// The variant's FEN (pockets, promoted marks and checks given included).
    pub fn to_fen(&self) -> String {
        dispatch!(self, p => p.to_fen())
    }

    /// The placement, side to move, castling rights, en passant square and clocks.
    pub fn board(&self) -> &Position {
        dispatch!(self, p => p.board())
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.board().turn()
    }

    /// Every legal move; none once the variant has ended the game.
    pub fn legal_moves(&self) -> MoveList {
        dispatch!(self, p => p.legal_moves())
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        dispatch!(self, p => p.is_check())
    }

    /// How the game stands if nothing more can be played: `None` while a legal move exists.
    pub fn outcome(&self) -> Option<VariantOutcome> {
        dispatch!(self, p => p.outcome())
    }

    /// `color` cannot win by the variant's material rule.
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        dispatch!(self, p => p.has_insufficient_material(color))
    }

    /// Whether `m` (a legal move) captures: a piece on its destination or en passant.
    pub fn is_capture(&self, m: Move) -> bool {
        !m.is_drop() && self.board().is_capture(m)
    }

    /// The move in UCI (drops as `N@f3`).
    pub fn uci(&self, m: Move) -> String {
        dispatch!(self, p => p.uci(m))
    }

    /// The move in SAN, with the suffixes python-chess writes in this variant.
    pub fn san(&self, m: Move) -> String {
        dispatch!(self, p => p.san(m))
    }

    /// Reads a move in UCI or SAN.
    pub fn parse_move(&self, text: &str) -> Result<Move, VariantMoveError> {
        dispatch!(self, p => p.parse_move(text))
    }

    /// The position after `m`, a legal move.
    pub fn after(&self, m: Move) -> AnyPosition {
        map!(self, p => p.after(m))
    }

    /// Leaf nodes of the legal move tree to `depth`.
    pub fn perft(&self, depth: u32) -> u64 {
        dispatch!(self, p => p.perft(depth))
    }

    /// Same position for the repetition rule (pockets and checks given included); positions
    /// of different variants never are.
    pub fn same_repetition_identity(&self, other: &AnyPosition) -> bool {
        match (self, other) {
            (AnyPosition::Crazyhouse(a), AnyPosition::Crazyhouse(b)) => {
                a.same_repetition_identity(b)
            }
            (AnyPosition::Atomic(a), AnyPosition::Atomic(b)) => a.same_repetition_identity(b),
            (AnyPosition::Antichess(a), AnyPosition::Antichess(b)) => a.same_repetition_identity(b),
            (AnyPosition::Horde(a), AnyPosition::Horde(b)) => a.same_repetition_identity(b),
            (AnyPosition::RacingKings(a), AnyPosition::RacingKings(b)) => {
                a.same_repetition_identity(b)
            }
            (AnyPosition::KingOfTheHill(a), AnyPosition::KingOfTheHill(b)) => {
                a.same_repetition_identity(b)
            }
            (AnyPosition::ThreeCheck(a), AnyPosition::ThreeCheck(b)) => {
                a.same_repetition_identity(b)
            }
            _ => false,
        }
    }

    /// The repetition key (pockets and checks given included).
    pub fn repetition_key(&self) -> u64 {
        dispatch!(self, p => p.repetition_key())
    }
}

impl PerftRoot for AnyPosition {
    fn root_moves(&self) -> MoveList {
        self.legal_moves()
    }

    fn child(&self, m: Move) -> AnyPosition {
        self.after(m)
    }

    fn count(&self, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        dispatch!(self, p => p.perft_until(depth, stop))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_starts_parses_its_own_fen_and_counts_its_first_moves() {
        // Perft 1 from each start: lichess's scalachess suites.
        let firsts = [20, 20, 20, 8, 21, 20, 20];
        for (kind, first) in VariantKind::ALL.into_iter().zip(firsts) {
            let start = AnyPosition::start(kind);
            assert_eq!(start.kind(), kind);
            assert_eq!(AnyPosition::from_fen(kind, &start.to_fen()), Ok(start));
            assert_eq!(start.perft(1), first, "{kind}");
            let stop = AtomicBool::new(false);
            assert_eq!(start.count(2, &stop), Ok(start.perft(2)), "{kind}");
        }
    }

    #[test]
    fn names_read_back_as_lichess_writes_them() {
        for kind in VariantKind::ALL {
            assert_eq!(VariantKind::from_name(kind.name()), Some(kind));
            assert_eq!(VariantKind::from_name(kind.key()), Some(kind));
        }
        assert_eq!(
            VariantKind::from_name("three-check"),
            Some(VariantKind::ThreeCheck)
        );
        assert_eq!(VariantKind::from_name("Chess960"), None);
        assert_eq!(VariantKind::from_name("Standard"), None);
    }

    #[test]
    fn a_raised_stop_flag_stops_a_deep_count() {
        let stop = AtomicBool::new(true);
        let pos = AnyPosition::start(VariantKind::Atomic);
        assert_eq!(pos.count(12, &stop), Err(PerftStopped));
    }
}

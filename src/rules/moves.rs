//! `Move`: one legal move as the engine sees it, and `MoveList`, a fixed-capacity list.

use std::fmt;
use std::mem::MaybeUninit;

use super::piece::Role;
use super::square::{File, Square};

/// What kind of move, beyond "a piece goes from one square to another".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum MoveKind {
    /// A piece move or capture, or a single pawn push.
    Normal = 0,
    /// A pawn's two-square first move.
    DoublePush,
    /// A pawn capturing en passant (the captured pawn is not on `to`).
    EnPassant,
    /// Castling: `from` is the king's square and `to` the castling rook's square, which
    /// serves standard chess and Chess960 alike.
    Castle,
    /// A pawn reaching the last rank and becoming a knight (with or without capture).
    PromoteKnight,
    /// ... becoming a bishop.
    PromoteBishop,
    /// ... becoming a rook.
    PromoteRook,
    /// ... becoming a queen.
    PromoteQueen,
    /// ... becoming a king (antichess only). Kept after the standard kinds so that the
    /// derived order of standard moves, which the store's move encoding uses, is unchanged.
    PromoteKing,
    /// A piece from the pocket put on the empty square `to` (crazyhouse only); `from`
    /// equals `to` and `role` is the dropped piece.
    Drop,
}

impl MoveKind {
    /// The promotion kind to `role` (a queen for anything a pawn cannot become).
    #[inline(always)]
    pub const fn promotion(role: Role) -> MoveKind {
        match role {
            Role::Knight => MoveKind::PromoteKnight,
            Role::Bishop => MoveKind::PromoteBishop,
            Role::Rook => MoveKind::PromoteRook,
            Role::King => MoveKind::PromoteKing,
            _ => MoveKind::PromoteQueen,
        }
    }
}

/// A move. Moves come from a position's generator or parsers, so a `Move` in hand is legal
/// in the position it came from; `role` is the moving piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// Where the piece stands (the king, for castling).
    pub from: Square,
    /// Where it goes (the castling rook's square, for castling).
    pub to: Square,
    /// The moving piece.
    pub role: Role,
    /// What else the move does.
    pub kind: MoveKind,
}

impl Move {
    /// A move of `role` from `from` to `to`; legal only if a position says so.
    #[inline(always)]
    pub const fn new(role: Role, from: Square, to: Square, kind: MoveKind) -> Move {
        Move {
            from,
            to,
            role,
            kind,
        }
    }

    /// The piece a pawn becomes, if this is a promotion.
    #[inline(always)]
    pub const fn promotion(self) -> Option<Role> {
        match self.kind {
            MoveKind::PromoteKnight => Some(Role::Knight),
            MoveKind::PromoteBishop => Some(Role::Bishop),
            MoveKind::PromoteRook => Some(Role::Rook),
            MoveKind::PromoteQueen => Some(Role::Queen),
            MoveKind::PromoteKing => Some(Role::King),
            _ => None,
        }
    }

    /// Whether the move castles.
    #[inline(always)]
    pub const fn is_castle(self) -> bool {
        matches!(self.kind, MoveKind::Castle)
    }

    /// A drop of `role` onto `to` (crazyhouse).
    #[inline(always)]
    pub const fn drop(role: Role, to: Square) -> Move {
        Move::new(role, to, to, MoveKind::Drop)
    }

    /// Whether the move drops a piece from the pocket.
    #[inline(always)]
    pub const fn is_drop(self) -> bool {
        matches!(self.kind, MoveKind::Drop)
    }

    /// Whether the move captures en passant.
    #[inline(always)]
    pub const fn is_en_passant(self) -> bool {
        matches!(self.kind, MoveKind::EnPassant)
    }

    /// Castling towards the h-file (O-O), given the move is castling.
    #[inline(always)]
    pub fn is_king_side_castle(self) -> bool {
        self.to.file() > self.from.file()
    }

    /// Where the king ends up: for castling the g- or c-file square, else `to`.
    #[inline(always)]
    pub fn king_to(self) -> Square {
        if self.is_castle() {
            let file = if self.is_king_side_castle() {
                File::G
            } else {
                File::C
            };
            Square::from_coords(file, self.from.rank())
        } else {
            self.to
        }
    }

    /// Where the castling rook ends up (f- or d-file), given the move is castling.
    #[inline(always)]
    pub fn rook_to(self) -> Square {
        let file = if self.is_king_side_castle() {
            File::F
        } else {
            File::D
        };
        Square::from_coords(file, self.from.rank())
    }

    /// The square a piece of the mover lands on for display: the king's destination for
    /// castling, `to` otherwise.
    pub fn destination(self) -> Square {
        self.king_to()
    }
}

impl fmt::Display for Move {
    /// King-takes-rook UCI; use `Position::uci` for the variant's own spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_drop() {
            return write!(f, "{}@{}", self.role.upper_char(), self.to);
        }
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion() {
            write!(f, "{}", p.char())?;
        }
        Ok(())
    }
}

/// A reachable standard position has at most 218 legal moves, but FEN can describe
/// unreachable ones (fifteen queens a side), and the variants hold more pieces: horde's 36
/// white pieces (all queens: under 972 moves), crazyhouse's 32 pieces on the board and in
/// hand (at most about 870 moves and drops). 1,024 bounds every position any variant's
/// FEN accepts.
pub const MAX_MOVES: usize = 1024;

/// A list of moves on the stack: the generator never allocates.
#[derive(Clone)]
pub struct MoveList {
    len: usize,
    moves: [MaybeUninit<Move>; MAX_MOVES],
}

impl MoveList {
    /// An empty list.
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            len: 0,
            moves: [MaybeUninit::uninit(); MAX_MOVES],
        }
    }

    /// Appends a move; the capacity is that of the most moves a legal position has.
    #[inline(always)]
    pub fn push(&mut self, m: Move) {
        // A legal position never exceeds MAX_MOVES; the bound check keeps a bug from
        // becoming memory unsafety.
        self.moves[self.len] = MaybeUninit::new(m);
        self.len += 1;
    }

    /// How many moves the list holds.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list holds no move.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves, in order.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        // SAFETY: the first `len` entries were written by `push` (or moved within that
        // prefix by `retain`/`sort`), and MaybeUninit<Move> has Move's layout.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }

    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [Move] {
        // SAFETY: as for `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr().cast::<Move>(), self.len) }
    }

    /// Whether `m` is in the list.
    pub fn contains(&self, m: &Move) -> bool {
        self.as_slice().contains(m)
    }

    /// Keeps only the moves `keep` accepts, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Move) -> bool) {
        let slice = self.as_mut_slice();
        let mut j = 0;
        for i in 0..slice.len() {
            if keep(&slice[i]) {
                slice[j] = slice[i];
                j += 1;
            }
        }
        self.len = j;
    }

    /// Sorts by (from, to, role, kind): the derived order of [`Move`].
    pub fn sort(&mut self) {
        self.as_mut_slice().sort_unstable();
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    #[inline(always)]
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

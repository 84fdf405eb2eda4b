//! `Position`: the board and all hidden state, with make (`play`) and undo.

use super::attacks::{self, Magic, Sliders};
use super::bitboard::Bitboard;
use super::moves::{Move, MoveKind};
use super::piece::{Piece, Role};
use super::square::{Color, Rank, Square};
use super::zobrist;

/// Which rules of castling and notation apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Variant {
    /// Standard chess: castling only from the e-file king with a- and h-file rooks; UCI
    /// castling written as the king's two-square step (`e1g1`).
    #[default]
    Standard,
    /// Fischer Random: any of the 960 back ranks; UCI castling as king-takes-rook (`e1h1`).
    Chess960,
}

/// A chess position with all the state the rules need: placement, side to move, castling
/// rights (kept per rook, so Chess960 works), the en passant square, both move counters,
/// and an incrementally maintained Zobrist key.
///
/// The en passant square is kept only when an en passant capture is actually legal, so
/// the key, equality and FEN output all follow FIDE's repetition identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    pub(crate) by_color: [Bitboard; 2],
    pub(crate) by_role: [Bitboard; 6],
    pub(crate) turn: Color,
    /// Squares of the rooks that still have castling rights (both colours).
    pub(crate) castling: Bitboard,
    pub(crate) ep_square: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) hash: u64,
    pub(crate) variant: Variant,
}

/// What `play` cannot recompute and `undo` needs: the memento of a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    captured: Option<Role>,
    castling: Bitboard,
    ep_square: Option<Square>,
    halfmoves: u32,
    hash: u64,
    /// The move number was already at `u32::MAX` and stayed there (it saturates rather
    /// than wrap to 0), so taking the move back must not lower it.
    fullmoves_saturated: bool,
}

impl Position {
    /// The standard starting position.
    pub fn new() -> Position {
        super::chess960::start_position(518, Variant::Standard).expect("518 is the standard array")
    }

    pub(crate) fn empty(variant: Variant) -> Position {
        Position {
            by_color: [Bitboard::EMPTY; 2],
            by_role: [Bitboard::EMPTY; 6],
            turn: Color::White,
            castling: Bitboard::EMPTY,
            ep_square: None,
            halfmoves: 0,
            fullmoves: 1,
            hash: 0,
            variant,
        }
    }

    // ---- accessors -------------------------------------------------------------------

    /// The side to move.
    #[inline(always)]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The variant whose castling and notation rules apply.
    #[inline(always)]
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// Half-moves since the last capture or pawn move (the fifty-move counter).
    #[inline(always)]
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    /// The move number, starting at 1 and incremented after black moves. It saturates at
    /// `u32::MAX` (a FEN may start there): it never wraps to 0.
    #[inline(always)]
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// The en passant target square, present only when an en passant capture is legal.
    #[inline(always)]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep_square
    }

    /// The Zobrist key (placement, side to move, castling rights, legal en passant file).
    #[inline(always)]
    pub fn zobrist(&self) -> u64 {
        self.hash
    }

    /// Squares of rooks that keep a castling right.
    #[inline(always)]
    pub fn castling_rooks(&self) -> Bitboard {
        self.castling
    }

    /// The squares of `color`'s pieces.
    #[inline(always)]
    pub fn by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// The squares of every piece of `role`, both colours.
    #[inline(always)]
    pub fn by_role(&self, role: Role) -> Bitboard {
        self.by_role[role.index()]
    }

    /// The squares of `color`'s pieces of `role`.
    #[inline(always)]
    pub fn pieces(&self, color: Color, role: Role) -> Bitboard {
        self.by_color[color.index()] & self.by_role[role.index()]
    }

    /// Every occupied square.
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// The king of `color`. A position always has exactly one king a side.
    #[inline(always)]
    pub fn king(&self, color: Color) -> Square {
        self.pieces(color, Role::King).first_unchecked()
    }

    /// What kind of piece stands on `sq`, if any.
    #[inline(always)]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        if !self.occupied().contains(sq) {
            return None;
        }
        Some(self.occupied_role_at(sq))
    }

    /// The role on a square known to be occupied.
    #[inline(always)]
    pub(crate) fn occupied_role_at(&self, sq: Square) -> Role {
        let bb = Bitboard::from_square(sq);
        if (self.by_role[Role::Pawn.index()] & bb).any() {
            Role::Pawn
        } else if (self.by_role[Role::Knight.index()] & bb).any() {
            Role::Knight
        } else if (self.by_role[Role::Bishop.index()] & bb).any() {
            Role::Bishop
        } else if (self.by_role[Role::Rook.index()] & bb).any() {
            Role::Rook
        } else if (self.by_role[Role::Queen.index()] & bb).any() {
            Role::Queen
        } else {
            Role::King
        }
    }

    /// The piece on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let role = self.role_at(sq)?;
        let color = if self.by_color[0].contains(sq) {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }

    /// Castling rook of `color` on the given side (king side: towards the h-file).
    pub fn castling_rook(&self, color: Color, king_side: bool) -> Option<Square> {
        let king = self.king(color);
        (self.castling & Bitboard::back_rank(color))
            .into_iter()
            .find(|r| (r.file() > king.file()) == king_side)
    }

    // ---- attacks ---------------------------------------------------------------------

    /// Pieces of `by` that attack `sq`, with the given occupancy.
    #[inline(always)]
    pub(crate) fn attackers_with<S: Sliders>(
        &self,
        sq: Square,
        by: Color,
        occupied: Bitboard,
    ) -> Bitboard {
        let theirs = self.by_color[by.index()];
        let rooks = self.by_role[Role::Rook.index()] | self.by_role[Role::Queen.index()];
        let bishops = self.by_role[Role::Bishop.index()] | self.by_role[Role::Queen.index()];
        ((attacks::knight_attacks(sq) & self.by_role[Role::Knight.index()])
            | (attacks::king_attacks(sq) & self.by_role[Role::King.index()])
            | (attacks::pawn_attacks(!by, sq) & self.by_role[Role::Pawn.index()])
            | (S::rook(sq, occupied) & rooks)
            | (S::bishop(sq, occupied) & bishops))
            & theirs
    }

    /// Whether any piece of `by` attacks `sq` with the given occupancy (early exit).
    #[inline(always)]
    pub(crate) fn is_attacked_with<S: Sliders>(
        &self,
        sq: Square,
        by: Color,
        occupied: Bitboard,
    ) -> bool {
        let theirs = self.by_color[by.index()];
        if (attacks::knight_attacks(sq) & self.by_role[Role::Knight.index()] & theirs).any()
            || (attacks::pawn_attacks(!by, sq) & self.by_role[Role::Pawn.index()] & theirs).any()
            || (attacks::king_attacks(sq) & self.by_role[Role::King.index()] & theirs).any()
        {
            return true;
        }
        let queens = self.by_role[Role::Queen.index()];
        let rooks = (self.by_role[Role::Rook.index()] | queens) & theirs;
        let bishops = (self.by_role[Role::Bishop.index()] | queens) & theirs;
        (rooks.any() && (S::rook(sq, occupied) & rooks).any())
            || (bishops.any() && (S::bishop(sq, occupied) & bishops).any())
    }

    /// Pieces of `by` attacking `sq` in this position.
    pub fn attackers(&self, sq: Square, by: Color) -> Bitboard {
        self.attackers_with::<Magic>(sq, by, self.occupied())
    }

    /// Enemy pieces giving check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.attackers(self.king(self.turn), !self.turn)
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        self.checkers().any()
    }

    // ---- make and undo ---------------------------------------------------------------

    #[inline(always)]
    pub(crate) fn put(&mut self, color: Color, role: Role, sq: Square) {
        self.by_color[color.index()] ^= sq;
        self.by_role[role.index()] ^= sq;
        self.hash ^= zobrist::piece(color, role, sq);
    }

    /// Removing is the same XOR as placing; the name says which one the caller means.
    #[inline(always)]
    pub(crate) fn remove(&mut self, color: Color, role: Role, sq: Square) {
        self.put(color, role, sq)
    }

    #[inline(always)]
    pub(crate) fn set_castling(&mut self, castling: Bitboard) {
        let mut changed = self.castling ^ castling;
        while let Some(sq) = changed.first() {
            self.hash ^= zobrist::castling(sq);
            changed = changed.without(sq);
        }
        self.castling = castling;
    }

    #[inline(always)]
    pub(crate) fn set_ep(&mut self, ep: Option<Square>) {
        if let Some(old) = self.ep_square {
            self.hash ^= zobrist::en_passant(old);
        }
        if let Some(new) = ep {
            self.hash ^= zobrist::en_passant(new);
        }
        self.ep_square = ep;
    }

    /// Plays `m`, which must be legal here (from this position's generator or parsers).
    /// Returns the memento that [`Position::undo`] needs.
    pub fn play(&mut self, m: Move) -> Undo {
        debug_assert!(
            self.legal_moves().contains(&m),
            "illegal move {m} in {}",
            self.to_fen()
        );
        if attacks::has_bmi2() {
            // SAFETY: BMI2 is present.
            unsafe { self.play_bmi2(m) }
        } else {
            self.play_unchecked::<Magic>(m)
        }
    }

    /// [`Position::play`] without its debug-build legality check, for searches that play
    /// only moves just generated from this very position (the check would regenerate the
    /// moves at every node of a debug-assertion test build).
    #[inline]
    pub(crate) fn play_trusted(&mut self, m: Move) -> Undo {
        if attacks::has_bmi2() {
            // SAFETY: BMI2 is present.
            unsafe { self.play_bmi2(m) }
        } else {
            self.play_unchecked::<Magic>(m)
        }
    }

    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi2"))]
    unsafe fn play_bmi2(&mut self, m: Move) -> Undo {
        self.play_unchecked::<attacks::Pext>(m)
    }

    /// Make without any legality check: the perft and generator hot path.
    #[inline(always)]
    pub(crate) fn play_unchecked<S: Sliders>(&mut self, m: Move) -> Undo {
        let us = self.turn;
        let them = !us;
        let undo = Undo {
            captured: None,
            castling: self.castling,
            ep_square: self.ep_square,
            halfmoves: self.halfmoves,
            hash: self.hash,
            fullmoves_saturated: us == Color::Black && self.fullmoves == u32::MAX,
        };
        let mut undo = undo;
        self.set_ep(None);
        // A FEN may give any counter up to u32::MAX: saturate, never wrap.
        self.halfmoves = self.halfmoves.saturating_add(1);
        let mut castling = self.castling;

        match m.kind {
            MoveKind::Castle => {
                let (king_to, rook_to) = (m.king_to(), m.rook_to());
                self.remove(us, Role::King, m.from);
                self.remove(us, Role::Rook, m.to);
                self.put(us, Role::King, king_to);
                self.put(us, Role::Rook, rook_to);
                castling &= !Bitboard::back_rank(us);
            }
            MoveKind::EnPassant => {
                let captured = Square::from_coords(m.to.file(), m.from.rank());
                self.remove(them, Role::Pawn, captured);
                self.remove(us, Role::Pawn, m.from);
                self.put(us, Role::Pawn, m.to);
                undo.captured = Some(Role::Pawn);
                self.halfmoves = 0;
            }
            _ => {
                if self.by_color[them.index()].contains(m.to) {
                    let captured = self.occupied_role_at(m.to);
                    self.remove(them, captured, m.to);
                    undo.captured = Some(captured);
                    self.halfmoves = 0;
                    castling = castling.without(m.to);
                }
                self.remove(us, m.role, m.from);
                match m.promotion() {
                    Some(p) => self.put(us, p, m.to),
                    None => self.put(us, m.role, m.to),
                }
                match m.role {
                    Role::Pawn => self.halfmoves = 0,
                    Role::King => castling &= !Bitboard::back_rank(us),
                    _ => castling = castling.without(m.from),
                }
            }
        }

        if castling != self.castling {
            self.set_castling(castling);
        }
        if us == Color::Black {
            self.fullmoves = self.fullmoves.saturating_add(1);
        }
        self.turn = them;
        self.hash ^= zobrist::black_to_move();

        if m.kind == MoveKind::DoublePush {
            let ep = Square::new((m.from as u8 + m.to as u8) / 2);
            if self.ep_capture_is_legal::<S>(ep) {
                self.set_ep(Some(ep));
            }
        }
        undo
    }

    /// Takes back `m`, which must be the move that produced `undo` from this position.
    /// Restores every bit of the position, the Zobrist key included.
    pub fn undo(&mut self, m: Move, undo: Undo) {
        let us = !self.turn;
        let them = self.turn;
        self.turn = us;
        match m.kind {
            MoveKind::Castle => {
                self.remove(us, Role::King, m.king_to());
                self.remove(us, Role::Rook, m.rook_to());
                self.put(us, Role::King, m.from);
                self.put(us, Role::Rook, m.to);
            }
            MoveKind::EnPassant => {
                self.remove(us, Role::Pawn, m.to);
                self.put(us, Role::Pawn, m.from);
                self.put(
                    them,
                    Role::Pawn,
                    Square::from_coords(m.to.file(), m.from.rank()),
                );
            }
            _ => {
                self.remove(us, m.promotion().unwrap_or(m.role), m.to);
                self.put(us, m.role, m.from);
                if let Some(captured) = undo.captured {
                    self.put(them, captured, m.to);
                }
            }
        }
        if us == Color::Black && !undo.fullmoves_saturated {
            self.fullmoves -= 1;
        }
        self.castling = undo.castling;
        self.ep_square = undo.ep_square;
        self.halfmoves = undo.halfmoves;
        self.hash = undo.hash;
    }

    /// Whether the side to move can legally capture en passant onto `ep` (the square a
    /// pawn just skipped). Simulates the capture, so it covers pins, checks, and the two
    /// pawns leaving one rank between a king and a rook.
    #[inline]
    pub(crate) fn ep_capture_is_legal<S: Sliders>(&self, ep: Square) -> bool {
        let us = self.turn;
        let candidates = attacks::pawn_attacks(!us, ep) & self.pieces(us, Role::Pawn);
        if candidates.is_empty() {
            return false;
        }
        let captured = ep_captured_square(us, ep);
        candidates
            .into_iter()
            .any(|from| self.ep_from_is_legal::<S>(from, ep, captured))
    }

    /// Legality of the specific en passant capture `from` x `ep` (captured pawn on `captured`).
    #[inline]
    pub(crate) fn ep_from_is_legal<S: Sliders>(
        &self,
        from: Square,
        ep: Square,
        captured: Square,
    ) -> bool {
        let us = self.turn;
        let them = !us;
        let king = self.king(us);
        let occ = (self.occupied() ^ from ^ captured) | ep;
        let theirs = self.by_color[them.index()].without(captured);
        let queens = self.by_role[Role::Queen.index()];
        let rooks = (self.by_role[Role::Rook.index()] | queens) & theirs;
        let bishops = (self.by_role[Role::Bishop.index()] | queens) & theirs;
        (S::rook(king, occ) & rooks).is_empty()
            && (S::bishop(king, occ) & bishops).is_empty()
            && (attacks::knight_attacks(king) & self.by_role[Role::Knight.index()] & theirs)
                .is_empty()
            && (attacks::pawn_attacks(us, king) & self.by_role[Role::Pawn.index()] & theirs)
                .is_empty()
    }

    // ---- whole-position facts --------------------------------------------------------

    /// The Zobrist key computed from scratch; always equals [`Position::zobrist`].
    pub fn zobrist_from_scratch(&self) -> u64 {
        let mut h = 0;
        for color in Color::ALL {
            for role in Role::ALL {
                for sq in self.pieces(color, role) {
                    h ^= zobrist::piece(color, role, sq);
                }
            }
        }
        for sq in self.castling {
            h ^= zobrist::castling(sq);
        }
        if let Some(ep) = self.ep_square {
            h ^= zobrist::en_passant(ep);
        }
        if self.turn == Color::Black {
            h ^= zobrist::black_to_move();
        }
        h
    }

    /// Neither side has mating material by the material rule: K v K, K+minor v K, or only
    /// bishops all on one colour (each side judged as python-chess and FIDE practice do:
    /// a lone knight or same-coloured bishops cannot even help the opponent self-mate).
    pub fn is_insufficient_material(&self) -> bool {
        Color::ALL
            .iter()
            .all(|&c| self.has_insufficient_material(c))
    }

    /// `color` cannot checkmate by any sequence of legal moves, by the material rule.
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        let ours = self.by_color(color);
        let theirs = self.by_color(!color);
        let heavy = self.by_role(Role::Pawn) | self.by_role(Role::Rook) | self.by_role(Role::Queen);
        if (ours & heavy).any() {
            return false;
        }
        if (ours & self.by_role(Role::Knight)).any() {
            return ours.count() <= 2
                && (theirs & !self.by_role(Role::King) & !self.by_role(Role::Queen)).is_empty();
        }
        if (ours & self.by_role(Role::Bishop)).any() {
            let bishops = self.by_role(Role::Bishop);
            let same_colour = (bishops & Bitboard::DARK_SQUARES).is_empty()
                || (bishops & Bitboard::LIGHT_SQUARES).is_empty();
            return same_colour
                && self.by_role(Role::Pawn).is_empty()
                && self.by_role(Role::Knight).is_empty();
        }
        true
    }

    /// Whether `m` captures (en passant included; castling never does).
    pub fn is_capture(&self, m: Move) -> bool {
        match m.kind {
            MoveKind::EnPassant => true,
            MoveKind::Castle => false,
            _ => self.by_color(!self.turn).contains(m.to),
        }
    }

    /// Whether `m` resets the fifty-move counter (a capture or a pawn move).
    pub fn is_zeroing(&self, m: Move) -> bool {
        m.role == Role::Pawn || self.is_capture(m)
    }

    /// The position after `m`, one of this position's generated moves (copy-make,
    /// without the debug-build legality check).
    #[inline]
    pub(crate) fn after_trusted(&self, m: Move) -> Position {
        let mut next = *self;
        next.play_trusted(m);
        next
    }

    /// The position after `m` (copy-make).
    pub fn after(&self, m: Move) -> Position {
        let mut next = *self;
        next.play(m);
        next
    }

    /// Same position for the repetition rule: placement, side to move, castling rights and
    /// the (legal) en passant square. Clocks are ignored.
    pub fn same_repetition_identity(&self, other: &Position) -> bool {
        self.hash == other.hash
            && self.by_color == other.by_color
            && self.by_role == other.by_role
            && self.turn == other.turn
            && self.castling == other.castling
            && self.ep_square == other.ep_square
    }
}

/// Where the pawn captured en passant stands: one rank beyond the skipped square, seen
/// from the capturer `us`.
#[inline(always)]
pub(crate) fn ep_captured_square(us: Color, ep: Square) -> Square {
    let rank = match us {
        Color::White => Rank::Fifth,
        Color::Black => Rank::Fourth,
    };
    Square::from_coords(ep.file(), rank)
}

impl Default for Position {
    fn default() -> Self {
        Position::new()
    }
}

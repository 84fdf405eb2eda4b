//! lichess's variants: one rules type per variant behind [`VariantRules`], and one
//! position type, [`VariantPosition`], generic over it, so every variant's move generator
//! and make are compiled on their own and standard chess ([`Position`]) is untouched.
//!
//! A variant position is a [`Position`] (the placement, castling rights kept per rook so
//! that Chess960 starting positions work, en passant, clocks) plus the state only some
//! variants have: crazyhouse's pockets and promoted pieces, three-check's checks given.
//! Castling notation follows the inner position's castling mode: standard when every
//! right is an a- or h-file rook with its king on e, Chess960 otherwise.

mod antichess;
mod any;
mod atomic;
mod crazyhouse;
mod fen;
mod horde;
mod king_of_the_hill;
mod notation;
mod pockets;
mod pseudo;
mod racing_kings;
mod san;
mod three_check;

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};

use super::bitboard::Bitboard;
use super::fen::Placement;
use super::moves::{Move, MoveKind, MoveList};
use super::perft::{PerftRoot, PerftStopped};
use super::piece::Role;
use super::position::Position;
use super::square::{Color, Square};

pub use antichess::Antichess;
pub use any::{AnyPosition, VariantKind};
pub use atomic::Atomic;
pub use crazyhouse::Crazyhouse;
pub use horde::Horde;
pub use king_of_the_hill::KingOfTheHill;
pub use notation::VariantMoveError;
pub use pockets::{POCKET_ROLES, Pockets};
pub use racing_kings::RacingKings;
pub use three_check::ThreeCheck;

/// How a game ended by its variant's own rule (not by checkmate or stalemate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VariantEnd {
    /// The side won: an exploded king, the hill, the third check, the race, all pieces
    /// lost (antichess) or the horde captured.
    Win(Color),
    /// Racing Kings' tie: both kings reached the eighth rank.
    Draw,
}

/// How a variant game stands when nothing more can be played.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VariantOutcome {
    /// The side to move is checkmated.
    Checkmate {
        /// The side that gave mate.
        winner: Color,
    },
    /// The side to move has no legal move and is not in check.
    Stalemate,
    /// The variant's own ending.
    Variant(VariantEnd),
}

/// The rules of one variant. Implemented by zero-sized types; [`VariantPosition`] is
/// generic over them so that each variant's code is monomorphised.
pub trait VariantRules: Copy + Default + Debug + Eq + Hash + Send + Sync + 'static {
    /// lichess's key for the variant (`atomic`, `kingOfTheHill`).
    const KEY: &'static str;
    /// The starting position's FEN.
    const START: &'static str;
    /// What a placement may hold in this variant.
    const PLACEMENT: Placement;
    /// A capture explodes the capturer and the pieces around it (atomic).
    const EXPLODES: bool = false;
    /// Captured pieces go to the capturer's pocket and may be dropped (crazyhouse).
    const POCKETS: bool = false;
    /// Checks are counted (three-check).
    const COUNTS_CHECKS: bool = false;
    /// The variant has castling (all but antichess).
    const CASTLING: bool = true;

    /// Every legal move of a position whose game the variant has not ended.
    fn generate(pos: &VariantPosition<Self>, list: &mut MoveList);

    /// How many legal moves a position whose game the variant has not ended has (perft's
    /// last ply). Variants with standard chess's moves count without listing them.
    fn count_moves(pos: &VariantPosition<Self>) -> u64 {
        let mut list = MoveList::new();
        Self::generate(pos, &mut list);
        list.len() as u64
    }

    /// Whether the side to move, with `ep` set as the en passant square and a pawn of its
    /// attacking it, has a legal en passant capture there (the game not ended). By
    /// default the variant's generator decides; variants with standard legality ask the
    /// standard pin test instead, which costs no generation.
    fn ep_capturable(pos: &VariantPosition<Self>, ep: Square) -> bool {
        let _ = ep;
        let mut list = MoveList::new();
        Self::generate(pos, &mut list);
        list.iter().any(|m| m.is_en_passant())
    }

    /// The variant's own ending, judged before any move is generated.
    fn variant_end(pos: &VariantPosition<Self>) -> Option<VariantEnd>;

    /// Whether the side to move is in check.
    fn is_check(pos: &VariantPosition<Self>) -> bool {
        standard_check(&pos.board)
    }

    /// What no game of the variant can reach in this placement, besides a check (by
    /// default nothing), which makes a FEN invalid.
    fn impossible_placement(_pos: &VariantPosition<Self>) -> Option<&'static str> {
        None
    }

    /// A side in a check no game can reach (by default: the side that just moved), which
    /// makes a FEN invalid.
    fn impossible_check(pos: &VariantPosition<Self>) -> Option<Color> {
        let them = !pos.board.turn();
        let king = pos.board.pieces(them, Role::King).first()?;
        pos.board
            .attackers(king, pos.board.turn())
            .any()
            .then_some(them)
    }

    /// What having no legal move means, when the variant does not end the game itself.
    fn no_moves(pos: &VariantPosition<Self>) -> VariantOutcome {
        if pos.is_check() {
            VariantOutcome::Checkmate {
                winner: !pos.board.turn(),
            }
        } else {
            VariantOutcome::Stalemate
        }
    }

    /// `color` cannot win by any sequence of legal moves, by the variant's material rule
    /// (python-chess's `has_insufficient_material`).
    fn has_insufficient_material(pos: &VariantPosition<Self>, color: Color) -> bool;
}

/// The side to move's king is attacked (false when it has no king).
pub(crate) fn standard_check(board: &Position) -> bool {
    let us = board.turn();
    match board.pieces(us, Role::King).first() {
        Some(king) => board.attackers(king, !us).any(),
        None => false,
    }
}

/// A position of variant `R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VariantPosition<R: VariantRules> {
    pub(crate) board: Position,
    pub(crate) pockets: Pockets,
    /// Pieces that were pawns (crazyhouse): they return to the pocket as pawns.
    pub(crate) promoted: Bitboard,
    /// Checks each side has given (three-check).
    pub(crate) checks_given: [u8; 2],
    pub(crate) rules: R,
}

impl<R: VariantRules> VariantPosition<R> {
    /// The variant's starting position.
    pub fn new() -> VariantPosition<R> {
        VariantPosition::from_fen(R::START).expect("the starting FEN is valid")
    }

    /// The placement, side to move, castling rights, en passant square and clocks.
    pub fn board(&self) -> &Position {
        &self.board
    }

    /// The side to move.
    pub fn turn(&self) -> Color {
        self.board.turn()
    }

    /// The pieces in hand (crazyhouse; empty elsewhere).
    pub fn pockets(&self) -> &Pockets {
        &self.pockets
    }

    /// The squares of pieces that were promoted (crazyhouse; empty elsewhere).
    pub fn promoted(&self) -> Bitboard {
        self.promoted
    }

    /// Checks `color` has given (three-check; 0 elsewhere).
    pub fn checks_given(&self, color: Color) -> u8 {
        self.checks_given[color.index()]
    }

    /// Every legal move; none once the variant has ended the game.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if R::variant_end(self).is_none() {
            R::generate(self, &mut list);
        }
        list
    }

    /// Whether the side to move is in check.
    pub fn is_check(&self) -> bool {
        R::is_check(self)
    }

    /// The variant's own ending, if it has come.
    pub fn variant_end(&self) -> Option<VariantEnd> {
        R::variant_end(self)
    }

    /// How the game stands if nothing more can be played: `None` while a legal move exists.
    pub fn outcome(&self) -> Option<VariantOutcome> {
        if let Some(end) = R::variant_end(self) {
            return Some(VariantOutcome::Variant(end));
        }
        let mut list = MoveList::new();
        R::generate(self, &mut list);
        if list.is_empty() {
            Some(R::no_moves(self))
        } else {
            None
        }
    }

    /// `color` cannot win by the variant's material rule.
    pub fn has_insufficient_material(&self, color: Color) -> bool {
        R::has_insufficient_material(self, color)
    }

    /// UCI: drops as `N@f3`, castling as the inner position's mode writes it.
    pub fn uci(&self, m: Move) -> String {
        if m.is_drop() {
            m.to_string()
        } else {
            self.board.uci(m)
        }
    }

    /// The position after `m` (copy-make).
    pub fn after(&self, m: Move) -> VariantPosition<R> {
        let mut next = *self;
        next.play(m);
        next
    }

    /// Plays `m`, which must be one of this position's legal moves.
    pub fn play(&mut self, m: Move) {
        self.play_board(m);
        if m.kind == MoveKind::DoublePush {
            let ep = Square::new((m.from as u8 + m.to as u8) / 2);
            self.keep_ep_if_capturable(ep);
        }
    }

    /// Everything `play` does but set the en passant square, which takes a move
    /// generation: enough for a legality test that only looks at the board.
    pub(crate) fn play_board(&mut self, m: Move) {
        let us = self.board.turn();
        let them = !us;
        let board = &mut self.board;
        board.set_ep(None);
        board.halfmoves = board.halfmoves.saturating_add(1);
        let mut castling = board.castling;
        let mut captured_at = None;
        match m.kind {
            MoveKind::Drop => {
                board.put(us, m.role, m.to);
                self.pockets.take(us, m.role);
            }
            MoveKind::Castle => {
                let (king_to, rook_to) = (m.king_to(), m.rook_to());
                board.remove(us, Role::King, m.from);
                board.remove(us, Role::Rook, m.to);
                board.put(us, Role::King, king_to);
                board.put(us, Role::Rook, rook_to);
                castling &= !Bitboard::back_rank(us);
            }
            MoveKind::EnPassant => {
                let captured = Square::from_coords(m.to.file(), m.from.rank());
                board.remove(them, Role::Pawn, captured);
                board.remove(us, Role::Pawn, m.from);
                board.put(us, Role::Pawn, m.to);
                board.halfmoves = 0;
                if R::POCKETS {
                    self.pockets.add(us, Role::Pawn);
                }
                captured_at = Some(m.to);
            }
            _ => {
                if board.by_color(them).contains(m.to) {
                    let captured = board.occupied_role_at(m.to);
                    board.remove(them, captured, m.to);
                    board.halfmoves = 0;
                    castling = castling.without(m.to);
                    if R::POCKETS {
                        let role = if self.promoted.contains(m.to) {
                            Role::Pawn
                        } else {
                            captured
                        };
                        self.pockets.add(us, role);
                        self.promoted = self.promoted.without(m.to);
                    }
                    captured_at = Some(m.to);
                }
                board.remove(us, m.role, m.from);
                match m.promotion() {
                    Some(p) => board.put(us, p, m.to),
                    None => board.put(us, m.role, m.to),
                }
                if R::POCKETS {
                    if m.promotion().is_some() {
                        self.promoted |= m.to;
                    } else if self.promoted.contains(m.from) {
                        self.promoted = self.promoted.without(m.from) | Bitboard::from_square(m.to);
                    }
                }
                match m.role {
                    Role::Pawn => board.halfmoves = 0,
                    Role::King => castling &= !Bitboard::back_rank(us),
                    _ => castling = castling.without(m.from),
                }
            }
        }
        if let Some(center) = captured_at.filter(|_| R::EXPLODES) {
            castling = atomic::explode(board, m, center, castling);
        }
        if castling != board.castling {
            board.set_castling(castling);
        }
        if us == Color::Black {
            board.fullmoves = board.fullmoves.saturating_add(1);
        }
        board.turn = them;
        board.hash ^= super::zobrist::black_to_move();
        if R::COUNTS_CHECKS && R::is_check(self) {
            let given = &mut self.checks_given[us.index()];
            *given = given.saturating_add(1);
        }
    }

    /// Sets the en passant square only if the side to move can legally capture there
    /// (the identity FIDE and python-chess use for repetitions and FEN).
    pub(crate) fn keep_ep_if_capturable(&mut self, ep: Square) {
        let us = self.board.turn();
        if (super::attacks::pawn_attacks(!us, ep) & self.board.pieces(us, Role::Pawn)).is_empty() {
            return;
        }
        self.board.set_ep(Some(ep));
        let capturable = R::variant_end(self).is_none() && R::ep_capturable(self, ep);
        if !capturable {
            self.board.set_ep(None);
        }
    }

    /// Leaf nodes of the legal move tree to `depth`.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        if R::variant_end(self).is_some() {
            return 0;
        }
        if depth == 1 {
            return R::count_moves(self);
        }
        // Generated in place, not through `legal_moves()`: a returned list is copied, and
        // at 1,024 moves that copy (4 KB) costs more than the node's own work.
        let mut moves = MoveList::new();
        R::generate(self, &mut moves);
        moves.iter().map(|&m| self.after(m).perft(depth - 1)).sum()
    }

    /// As [`VariantPosition::perft`], stopping early once `stop` is raised (checked at
    /// every node of depth 3 or more: microseconds apart), for counts a caller may abandon.
    pub fn perft_until(&self, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        if depth < 3 {
            return Ok(self.perft(depth));
        }
        if stop.load(Ordering::Relaxed) {
            return Err(PerftStopped);
        }
        let mut moves = MoveList::new();
        if R::variant_end(self).is_none() {
            R::generate(self, &mut moves);
        }
        let mut nodes = 0;
        for &m in moves.iter() {
            nodes += self.after(m).perft_until(depth - 1, stop)?;
        }
        Ok(nodes)
    }
}

impl<R: VariantRules> PerftRoot for VariantPosition<R> {
    fn root_moves(&self) -> MoveList {
        self.legal_moves()
    }

    fn child(&self, m: Move) -> VariantPosition<R> {
        self.after(m)
    }

    fn count(&self, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        self.perft_until(depth, stop)
    }
}

impl<R: VariantRules> Default for VariantPosition<R> {
    fn default() -> Self {
        VariantPosition::new()
    }
}

/// Standard chess's en passant legality (pins, checks, the rank emptied between king and
/// rook) for a side with a king.
#[inline]
pub(crate) fn standard_ep_capturable(board: &Position, ep: Square) -> bool {
    board.ep_capture_is_legal::<super::attacks::Magic>(ep)
}

/// The legal moves of standard chess for the inner position (both kings present).
#[inline]
pub(crate) fn standard_moves(board: &Position, list: &mut MoveList) {
    board.legal_moves_into(list);
}

impl<R: VariantRules> VariantPosition<R> {
    /// The repetition key: the placement, side to move, castling rights and legal en
    /// passant square (the inner position's Zobrist key), and the state the variant adds
    /// to a position's identity: crazyhouse's pockets and promoted pieces, three-check's
    /// checks given. Equal positions have equal keys.
    pub fn repetition_key(&self) -> u64 {
        let mut key = self.board.zobrist();
        if R::POCKETS {
            for color in Color::ALL {
                for role in POCKET_ROLES {
                    let n = self.pockets.count(color, role);
                    if n > 0 {
                        let slot = (color.index() * 8 + role.index()) as u64;
                        key ^= mix((0x100 + slot) << 32 | u64::from(n));
                    }
                }
            }
            if self.promoted.any() {
                key ^= mix(0x300 << 32 ^ self.promoted.0);
            }
        }
        if R::COUNTS_CHECKS {
            for color in Color::ALL {
                let n = self.checks_given[color.index()];
                if n > 0 {
                    key ^= mix((0x200 + color.index() as u64) << 32 | u64::from(n));
                }
            }
        }
        key
    }
}

impl<R: VariantRules> VariantPosition<R> {
    /// Same position for the repetition rule: the inner position's identity (placement,
    /// side to move, castling rights, legal en passant square) and the variant's own
    /// state (pockets, promoted pieces, checks given). Clocks are ignored.
    pub fn same_repetition_identity(&self, other: &VariantPosition<R>) -> bool {
        self.board.same_repetition_identity(&other.board)
            && self.pockets == other.pockets
            && self.promoted == other.promoted
            && self.checks_given == other.checks_given
    }
}

/// Spreads a small identifier over all 64 bits (the key tables' splitmix64).
fn mix(x: u64) -> u64 {
    super::zobrist::splitmix(&mut { x })
}

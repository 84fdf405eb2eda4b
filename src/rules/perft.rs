//! Perft: counts the leaf nodes of the legal move tree to a depth. Matching published
//! counts to a good depth on a large suite is the proof that the rules are right.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::attacks::{self, Magic, Pext, Sliders};
use super::bitboard::Bitboard;
use super::leaf::{self, Black, Side, White};
use super::movegen::{MoveSink, PawnBatch, generate};
use super::moves::{Move, MoveKind, MoveList};
use super::piece::Role;
use super::position::Position;
use super::square::{Color, Square};

/// A perft stopped because its stop flag was raised (cancelled or past its deadline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("perft was stopped before it finished")]
pub struct PerftStopped;

/// Nodes per root move, in the root's legal move order.
pub type Divide = Vec<(Move, u64)>;

/// The result of a perft run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerftResult {
    /// The number of move sequences (leaf nodes).
    pub nodes: u64,
    /// Filled only when divide was asked for.
    pub divide: Divide,
}

/// A slider back-end with its own compiled recursion point, so the BMI2 build of the
/// whole subtree count (not just its leaves) is compiled with `pext` inlined.
trait Backend: Sliders {
    /// Leaves below `pos` at `depth` >= 2.
    fn subtree(pos: &Position, depth: u32) -> u64;
}

impl Backend for Magic {
    #[inline(never)]
    fn subtree(pos: &Position, depth: u32) -> u64 {
        expand::<Magic>(pos, depth)
    }
}

impl Backend for Pext {
    #[inline(always)]
    fn subtree(pos: &Position, depth: u32) -> u64 {
        // SAFETY: Pext is only chosen after `has_bmi2()` said yes (BMI1, BMI2, POPCNT).
        unsafe { subtree_bmi2(pos, depth) }
    }
}

/// Compiled with `popcnt` and BMI1 besides BMI2: in the portable build `count_ones` is a
/// dozen shifts and masks, and a profile put a fifth of perft's time in it (the leaf
/// count adds up batch sizes); `tzcnt`/`blsr` shorten every square loop.
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi1,bmi2,popcnt"))]
unsafe fn subtree_bmi2(pos: &Position, depth: u32) -> u64 {
    expand::<Pext>(pos, depth)
}

/// Expands each generated move into a child position and counts its subtree in place,
/// so interior nodes never build a move list.
struct Expand<'a, S: Backend> {
    pos: &'a Position,
    depth: u32,
    nodes: u64,
    _s: std::marker::PhantomData<S>,
}

impl<S: Backend> Expand<'_, S> {
    #[inline(always)]
    fn child(&mut self, m: Move) {
        let mut child = *self.pos;
        child.play_unchecked::<S>(m);
        self.nodes += count::<S>(&child, self.depth - 1);
    }
}

impl<S: Backend> MoveSink for Expand<'_, S> {
    #[inline(always)]
    fn piece(&mut self, role: Role, from: Square, to: Bitboard) {
        for t in to {
            self.child(Move::new(role, from, t, MoveKind::Normal));
        }
    }
    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, delta: i8, batch: PawnBatch) {
        for t in to {
            let from = Square::new((t as i8 - delta) as u8);
            match batch {
                PawnBatch::Normal => self.child(Move::new(Role::Pawn, from, t, MoveKind::Normal)),
                PawnBatch::DoublePush => {
                    self.child(Move::new(Role::Pawn, from, t, MoveKind::DoublePush))
                }
                PawnBatch::Promotion => {
                    for kind in [
                        MoveKind::PromoteQueen,
                        MoveKind::PromoteRook,
                        MoveKind::PromoteBishop,
                        MoveKind::PromoteKnight,
                    ] {
                        self.child(Move::new(Role::Pawn, from, t, kind));
                    }
                }
            }
        }
    }
    #[inline(always)]
    fn special(&mut self, m: Move) {
        self.child(m);
    }
}

#[inline(always)]
fn expand<S: Backend>(pos: &Position, depth: u32) -> u64 {
    if depth == 2 {
        return match pos.turn {
            Color::White => last_ply::<S, White>(pos),
            Color::Black => last_ply::<S, Black>(pos),
        };
    }
    let mut e = Expand::<S> {
        pos,
        depth,
        nodes: 0,
        _s: std::marker::PhantomData,
    };
    generate::<S, _>(pos, &mut e);
    e.nodes
}

/// Depth 2: every child of `pos` (side `C` to move) is made only far enough for
/// [`leaf::count`], which reads the placement, castling rights, en passant square and side
/// to move. The Zobrist key and the clocks of these children are left stale: nothing
/// reads them before the child is dropped. Most children made in a perft are these
/// (one per node above the leaves), so this is where a lighter make pays.
#[inline(always)]
fn last_ply<S: Backend, C: Side>(pos: &Position) -> u64 {
    let mut sink = LastPly::<S, C> {
        pos,
        nodes: 0,
        _s: std::marker::PhantomData,
    };
    generate::<S, _>(pos, &mut sink);
    sink.nodes
}

/// The sink of [`last_ply`]: counts each child's legal moves as it is generated.
struct LastPly<'a, S: Backend, C: Side> {
    pos: &'a Position,
    nodes: u64,
    _s: std::marker::PhantomData<(S, C)>,
}

impl<S: Backend, C: Side> LastPly<'_, S, C> {
    /// Counts the child after `role` moves from `from` to `to` (capturing whatever stands
    /// there) and stands there as `becomes`. Castling and en passant never come here.
    #[inline(always)]
    fn child(&mut self, role: Role, from: Square, to: Square, becomes: Role, double_push: bool) {
        let mut child = *self.pos;
        let (f, t) = (Bitboard::from_square(from), Bitboard::from_square(to));
        // A capture takes `to` out of every role board: with no key to update, which role
        // stood there does not matter, and the six masks cost less than finding out.
        for bb in &mut child.by_role {
            *bb &= !t;
        }
        child.by_color[<C::Them as Side>::US.index()] &= !t;
        child.by_color[C::US.index()] ^= f | t;
        child.by_role[role.index()] ^= f;
        child.by_role[becomes.index()] |= t;
        // Moving from or capturing on a rook's square ends its right; a king move ends both.
        child.castling &= !(f | t);
        if role == Role::King {
            child.castling &= !Bitboard::back_rank(C::US);
        }
        child.turn = <C::Them as Side>::US;
        child.ep_square = None;
        if double_push {
            let ep = Square::new((from as u8 + to as u8) / 2);
            if child.ep_capture_is_legal::<S>(ep) {
                child.ep_square = Some(ep);
            }
        }
        self.nodes += leaf::count::<S, C::Them>(&child);
    }
}

impl<S: Backend, C: Side> MoveSink for LastPly<'_, S, C> {
    #[inline(always)]
    fn piece(&mut self, role: Role, from: Square, to: Bitboard) {
        for t in to {
            self.child(role, from, t, role, false);
        }
    }
    #[inline(always)]
    fn pawns(&mut self, to: Bitboard, delta: i8, batch: PawnBatch) {
        for t in to {
            let from = Square::new((t as i8 - delta) as u8);
            match batch {
                PawnBatch::Normal => self.child(Role::Pawn, from, t, Role::Pawn, false),
                PawnBatch::DoublePush => self.child(Role::Pawn, from, t, Role::Pawn, true),
                PawnBatch::Promotion => {
                    for role in [Role::Queen, Role::Rook, Role::Bishop, Role::Knight] {
                        self.child(Role::Pawn, from, t, role, false);
                    }
                }
            }
        }
    }
    #[inline(always)]
    fn special(&mut self, m: Move) {
        // Castling and en passant are rare: the full make.
        let mut child = *self.pos;
        child.play_unchecked::<S>(m);
        self.nodes += leaf::count::<S, C::Them>(&child);
    }
}

/// The single-threaded count. Depth 1 is bulk-counted by [`leaf::count`], specialised for
/// the side to move: target sets are added up by size, never expanded into moves.
#[inline(always)]
fn count<S: Backend>(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => match pos.turn {
            Color::White => leaf::count::<S, White>(pos),
            Color::Black => leaf::count::<S, Black>(pos),
        },
        _ => S::subtree(pos, depth),
    }
}

/// Counts with a stop flag checked at every node of depth 3 or more (a depth-2 subtree is
/// at most a few ten thousand leaves: microseconds).
fn count_stoppable<S: Backend>(
    pos: &Position,
    depth: u32,
    stop: &AtomicBool,
) -> Result<u64, PerftStopped> {
    if depth < 3 {
        return Ok(count::<S>(pos, depth));
    }
    if stop.load(Ordering::Relaxed) {
        return Err(PerftStopped);
    }
    let mut list = MoveList::new();
    generate::<S, _>(pos, &mut list);
    let mut nodes = 0;
    for &m in list.iter() {
        let mut child = *pos;
        child.play_unchecked::<S>(m);
        nodes += count_stoppable::<S>(&child, depth - 1, stop)?;
    }
    Ok(nodes)
}

mod dispatch {
    use super::*;

    pub fn portable(pos: &Position, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        count_stoppable::<Magic>(pos, depth, stop)
    }

    #[cfg_attr(target_arch = "x86_64", target_feature(enable = "bmi1,bmi2,popcnt"))]
    pub unsafe fn bmi2(pos: &Position, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        count_stoppable::<Pext>(pos, depth, stop)
    }
}

fn count_dispatch(pos: &Position, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
    super::movegen::with_sliders!(dispatch(pos, depth, stop))
}

/// Perft on one thread: the number of legal move sequences of `depth` plies from `pos`
/// (1 at depth 0). Published counts for many positions prove a move generator.
///
/// ```
/// use chess_service::rules::{Position, Variant, perft};
///
/// assert_eq!(perft(&Position::new(), 4), 197_281);
/// // Kiwipete: castling through an attacked square would give 2,043 here.
/// let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
/// let pos = Position::from_fen(kiwipete, Variant::Standard).unwrap();
/// assert_eq!(perft(&pos, 2), 2_039);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    let never = AtomicBool::new(false);
    count_dispatch(pos, depth, &never).expect("the stop flag is never raised")
}

/// Perft on one thread with the portable (magic) back-end, whatever the CPU: lets the
/// tests prove both back-ends on a BMI2 machine.
#[doc(hidden)]
pub fn perft_portable(pos: &Position, depth: u32) -> u64 {
    let never = AtomicBool::new(false);
    dispatch::portable(pos, depth, &never).expect("the stop flag is never raised")
}

/// Perft with nodes per root move, on one thread.
///
/// ```
/// use chess_service::rules::{Position, perft_divide};
///
/// let pos = Position::new();
/// let divide = perft_divide(&pos, 3);
/// assert_eq!(divide.len(), 20);
/// assert_eq!(divide.iter().map(|(_, n)| n).sum::<u64>(), 8_902);
/// let e4 = pos.parse_uci("e2e4").unwrap();
/// assert_eq!(divide.iter().find(|(m, _)| *m == e4).map(|(_, n)| *n), Some(600));
/// ```
pub fn perft_divide(pos: &Position, depth: u32) -> Divide {
    let never = AtomicBool::new(false);
    perft_parallel(pos, depth, 1, true, &never)
        .expect("the stop flag is never raised")
        .divide
}

/// A position perft can count from: standard chess's [`Position`] and every variant's.
/// [`perft_parallel`] splits the root's tree into tasks with `root_moves` and `child`, and
/// counts each task with `count`, which is the position type's own monomorphised count.
pub trait PerftRoot: Clone + Send + Sync {
    /// The legal moves.
    fn root_moves(&self) -> MoveList;
    /// The position after `m`, one of `root_moves`.
    fn child(&self, m: Move) -> Self;
    /// Leaf nodes to `depth`, stopping early (microseconds after) once `stop` is raised.
    fn count(&self, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped>;
}

impl PerftRoot for Position {
    fn root_moves(&self) -> MoveList {
        self.legal_moves()
    }

    fn child(&self, m: Move) -> Position {
        self.after(m)
    }

    fn count(&self, depth: u32, stop: &AtomicBool) -> Result<u64, PerftStopped> {
        count_dispatch(self, depth, stop)
    }
}

/// How many threads "all cores" means here.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Perft split across `threads` threads (0: all cores), optionally with divide, stopping
/// early when `stop` is raised. Work is handed out as root-move pairs (as root moves at
/// shallow depths or on one thread).
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use chess_service::rules::{Position, perft_parallel};
///
/// let stop = AtomicBool::new(false);
/// let result = perft_parallel(&Position::new(), 4, 2, false, &stop).unwrap();
/// assert_eq!(result.nodes, 197_281);
/// // Raised before the start, the flag stops it at once.
/// let raised = AtomicBool::new(true);
/// assert!(perft_parallel(&Position::new(), 9, 2, false, &raised).is_err());
/// ```
pub fn perft_parallel<P: PerftRoot>(
    pos: &P,
    depth: u32,
    threads: usize,
    divide: bool,
    stop: &AtomicBool,
) -> Result<PerftResult, PerftStopped> {
    let threads = if threads == 0 {
        available_threads()
    } else {
        threads
    };
    if depth == 0 {
        return Ok(PerftResult {
            nodes: 1,
            divide: Vec::new(),
        });
    }
    let root = pos.root_moves();
    // Tasks: (root index, position to count, depth left).
    let mut tasks: Vec<(usize, P, u32)> = Vec::new();
    // Root-move pairs make hundreds of small tasks, so no thread idles long at the end
    // waiting for one big subtree; below depth 4 the tree is too small to matter.
    let split = threads > 1 && depth >= 4;
    for (i, &m) in root.iter().enumerate() {
        let child = pos.child(m);
        if split {
            for &m2 in child.root_moves().iter() {
                tasks.push((i, child.child(m2), depth - 2));
            }
        } else {
            tasks.push((i, child, depth - 1));
        }
    }
    let per_root: Vec<AtomicU64Cell> = (0..root.len()).map(|_| AtomicU64Cell::default()).collect();
    let next = AtomicUsize::new(0);
    let stopped = AtomicBool::new(false);
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((root_index, p, d)) = tasks.get(i) else {
                break;
            };
            match p.count(*d, stop) {
                Ok(n) => per_root[*root_index].add(n),
                Err(PerftStopped) => {
                    stopped.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
    };
    // The calling thread is one of the workers: it is already running on its core, so
    // only the others wait to be scheduled (none are spawned for one thread or one task).
    std::thread::scope(|s| {
        for _ in 1..threads.min(tasks.len()) {
            s.spawn(worker);
        }
        worker();
    });
    if stopped.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
        return Err(PerftStopped);
    }
    let counts: Vec<u64> = per_root.iter().map(AtomicU64Cell::get).collect();
    let nodes = counts.iter().sum();
    let divide = if divide {
        root.iter().copied().zip(counts).collect()
    } else {
        Vec::new()
    };
    Ok(PerftResult { nodes, divide })
}

#[derive(Default)]
struct AtomicU64Cell(std::sync::atomic::AtomicU64);

impl AtomicU64Cell {
    fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }
    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Which slider back-end perft uses on this machine, for benchmark reports.
pub fn backend_name() -> &'static str {
    if attacks::has_bmi2() {
        "pext (BMI2)"
    } else {
        "magic"
    }
}

//! The MOVES section: each move as its index among the legal moves of the position
//! before it, in [`Position::legal_moves_sorted`] order, in the truncated binary code;
//! encoded incrementally ([`MoveEncoder`]) and replayed through the rules on reading.

use crate::rules::{Game, GamePosition, Move};

use super::CodecError;
use super::bits::{
    BitReader, BitWriter, check_padding, get_index, get_varint, put_index, put_varint,
};

/// The encoded moves of one game, kept so that a save after one more move (or an undo)
/// encodes only what changed. It is a pure cache: [`MoveEncoder::sync`] checks the game's
/// start and move prefix against what it holds and re-encodes whatever differs.
#[derive(Clone, Debug)]
pub struct MoveEncoder {
    start: GamePosition,
    moves: Vec<Move>,
    /// `ends[i]` is the bit length after move `i`.
    ends: Vec<u64>,
    bits: BitWriter,
}

impl MoveEncoder {
    /// An encoder of no moves yet, from `start`.
    pub fn new(start: GamePosition) -> MoveEncoder {
        MoveEncoder {
            start,
            moves: Vec::new(),
            ends: Vec::new(),
            bits: BitWriter::new(),
        }
    }

    /// The start position the moves are indexed from.
    pub fn start(&self) -> &GamePosition {
        &self.start
    }

    /// Moves encoded.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The packed move indexes. For tests (`testing` feature).
    #[cfg(feature = "testing")]
    pub fn bits(&self) -> &BitWriter {
        &self.bits
    }

    /// The MOVES section's payload: the ply count and the packed moves.
    pub(super) fn section(&self) -> Vec<u8> {
        let bytes = self.bits.as_bytes();
        let mut sec = Vec::with_capacity(bytes.len() + 3);
        put_varint(&mut sec, self.ply() as u64);
        sec.extend_from_slice(bytes);
        sec
    }

    /// Brings the encoding in line with `game`: keeps the common prefix, encodes the
    /// rest. Returns how many moves had to be encoded.
    pub fn sync(&mut self, game: &Game) -> Result<usize, CodecError> {
        if *game.start() != self.start {
            *self = MoveEncoder::new(*game.start());
        }
        let moves = game.moves();
        let common = self
            .moves
            .iter()
            .zip(moves)
            .take_while(|(a, b)| a == b)
            .count();
        self.moves.truncate(common);
        self.ends.truncate(common);
        self.bits.truncate(if common == 0 {
            0
        } else {
            self.ends[common - 1]
        });
        for (ply, &m) in moves.iter().enumerate().skip(common) {
            let pos = game.position_at(ply).ok_or_else(|| CodecError::NotLegal {
                ply,
                mv: m.to_string(),
            })?;
            let (r, n) = move_index(pos, m).ok_or_else(|| CodecError::NotLegal {
                ply,
                mv: pos.uci(m),
            })?;
            put_index(&mut self.bits, r, n);
            self.moves.push(m);
            self.ends.push(self.bits.bit_len());
        }
        Ok(moves.len() - common)
    }
}

/// The order of [`Position::legal_moves_sorted`] — by (from, to, role, kind), the
/// derived order of [`Move`] — as one integer, so the codec can rank and select moves
/// without sorting whole lists. The fields are `repr(u8)` enums declared in that order.
#[inline(always)]
pub fn order_key(m: &Move) -> u32 {
    (m.from as u32) << 24 | (m.to as u32) << 16 | (m.role as u32) << 8 | m.kind as u32
}

/// How a move is coded: its index among the legal moves of `pos` in the sorted order
/// (counted, not sorted: the moves before it) and their number; `None` if `m` is not
/// legal there.
pub(super) fn move_index(pos: &GamePosition, m: Move) -> Option<(u32, u32)> {
    let legal = pos.legal_moves();
    if !legal.contains(&m) {
        return None;
    }
    let key = order_key(&m);
    let r = legal.iter().filter(|x| order_key(x) < key).count();
    Some((r as u32, legal.len() as u32))
}

/// Reads a move coded by [`move_index`] among `legal` (the position's legal moves, in any
/// order; reordered here). `None` when the bits run out.
pub(super) fn read_move(reader: &mut BitReader<'_>, legal: &mut [Move]) -> Option<Move> {
    let r = get_index(reader, legal.len() as u32)?;
    // The r-th move in sorted order, found without sorting the whole list.
    let (_, &mut m, _) = legal.select_nth_unstable_by_key(r as usize, order_key);
    Some(m)
}

/// Replays the moves section from `start`, validating every move through the rules.
pub(super) fn replay(start: GamePosition, sec: &[u8]) -> Result<(Game, MoveEncoder), CodecError> {
    let mut pos = 0;
    let ply = get_varint(sec, &mut pos).ok_or_else(|| CodecError::BadMovesSection {
        what: "bad ply count".into(),
    })?;
    let bytes = &sec[pos..];
    // Each move beyond forced ones takes at least one bit; forced moves take none, so the
    // count is bounded only by the rules (the 75-move rule and fivefold repetition end
    // every game). Cap it anyway so a damaged count cannot run the loop for long.
    const MAX_PLY: u64 = 1 << 20;
    if ply > MAX_PLY {
        return Err(CodecError::BadMovesSection {
            what: format!("ply count {ply} is implausible"),
        });
    }
    let ply = ply as usize;
    let mut reader = BitReader { bytes, pos: 0 };
    let mut game = Game::new(start);
    let mut encoder = MoveEncoder::new(start);
    encoder.moves.reserve(ply);
    encoder.ends.reserve(ply);
    let mut legal: Vec<Move> = Vec::with_capacity(64);
    for i in 0..ply {
        // The rules decide: the game must still be going, and the move is drawn from the
        // rules' own list of legal moves in the current position.
        legal.clear();
        legal.extend_from_slice(&game.position().legal_moves());
        let status = game.status_with(!legal.is_empty());
        if status.is_over() {
            return Err(CodecError::Replay {
                ply: i,
                what: format!(
                    "the game had already ended ({status:?}), yet the record has more moves"
                ),
            });
        }
        let m = read_move(&mut reader, &mut legal).ok_or_else(|| CodecError::Replay {
            ply: i,
            what: format!("the move bits end after {} of {ply} moves", i),
        })?;
        // Legal by construction (taken from the legal list of this very position), so
        // the second legality check inside `Game::play` is skipped.
        game.push_unchecked(m);
        encoder.moves.push(m);
        encoder.ends.push(reader.pos);
    }
    check_padding(bytes, reader.pos, &format!("the {ply} moves"))
        .map_err(|what| CodecError::BadMovesSection { what })?;
    encoder.bits = BitWriter {
        bytes: bytes.to_vec(),
        len: reader.pos,
    };
    Ok((game, encoder))
}

/// Bits the moves of `game` take in this encoding, and the floor for the same uniform
/// model (the sum of log2 of the number of legal moves before each move): for measuring.
#[cfg(feature = "testing")]
pub fn move_bits(game: &Game) -> Result<(u64, f64), CodecError> {
    let floor = (0..game.ply())
        .filter_map(|ply| game.position_at(ply))
        .map(|pos| (pos.legal_moves().len() as f64).log2())
        .sum();
    let mut enc = MoveEncoder::new(*game.start());
    enc.sync(game)?;
    Ok((enc.bits.bit_len(), floor))
}

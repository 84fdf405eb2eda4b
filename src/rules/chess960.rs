//! Chess960 start positions by Scharnagl number (0..=959; 518 is the standard array).

use super::piece::Role;
use super::position::{Position, Variant};
use super::square::{Color, File, Square};

/// The number is outside 0..=959.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("Chess960 position {0} does not exist; numbers run from 0 to 959")]
pub struct Chess960Error(pub u32);

/// The number of Chess960 start positions.
pub const CHESS960_POSITIONS: u32 = 960;

/// The back rank of start position `n`, a-file first.
pub fn back_rank(n: u32) -> Result<[Role; 8], Chess960Error> {
    if n >= CHESS960_POSITIONS {
        return Err(Chess960Error(n));
    }
    let mut rank: [Option<Role>; 8] = [None; 8];
    let (n, light) = (n / 4, n % 4);
    rank[(2 * light + 1) as usize] = Some(Role::Bishop);
    let (n, dark) = (n / 4, n % 4);
    rank[(2 * dark) as usize] = Some(Role::Bishop);
    let (n, queen) = (n / 6, n % 6);
    place_in_nth_empty(&mut rank, queen as usize, Role::Queen);
    // The remaining number 0..=9 picks two of the five empty squares for the knights.
    const KNIGHTS: [(usize, usize); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (first, second) = KNIGHTS[n as usize];
    // Place the later one first so the earlier index still counts the same empties.
    place_in_nth_empty(&mut rank, second, Role::Knight);
    place_in_nth_empty(&mut rank, first, Role::Knight);
    // Rook, king, rook on the last three empty squares.
    for role in [Role::Rook, Role::King, Role::Rook] {
        place_in_nth_empty(&mut rank, 0, role);
    }
    Ok(rank.map(|r| r.expect("all eight squares are filled")))
}

fn place_in_nth_empty(rank: &mut [Option<Role>; 8], n: usize, role: Role) {
    let index = rank
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_none())
        .nth(n)
        .map(|(i, _)| i);
    rank[index.expect("a Chess960 back rank always has room")] = Some(role);
}

/// The start position with number `n`, with full castling rights.
pub fn start_position(n: u32, variant: Variant) -> Result<Position, Chess960Error> {
    let rank = back_rank(n)?;
    let mut pos = Position::empty(variant);
    for (i, role) in rank.iter().enumerate() {
        let file = File::ALL[i];
        for color in Color::ALL {
            let back = Square::from_coords(file, color.back_rank());
            let pawn = Square::from_coords(file, color.relative_rank(super::square::Rank::Second));
            pos.by_color[color.index()] |= back;
            pos.by_role[role.index()] |= back;
            pos.by_color[color.index()] |= pawn;
            pos.by_role[Role::Pawn.index()] |= pawn;
            if *role == Role::Rook {
                pos.castling |= back;
            }
        }
    }
    pos.hash = pos.zobrist_from_scratch();
    Ok(pos)
}

/// The Scharnagl number of a position's back rank, if it is a Chess960 start array
/// (white's pieces on rank 1 mirrored by black's on rank 8).
pub fn number_of(pos: &Position) -> Option<u32> {
    let mut rank = [Role::Pawn; 8];
    for (i, file) in File::ALL.iter().enumerate() {
        let w = pos.piece_at(Square::from_coords(*file, Color::White.back_rank()))?;
        let b = pos.piece_at(Square::from_coords(*file, Color::Black.back_rank()))?;
        if w.color != Color::White || b.color != Color::Black || w.role != b.role {
            return None;
        }
        rank[i] = w.role;
    }
    (0..CHESS960_POSITIONS).find(|&n| back_rank(n).ok() == Some(rank))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers() {
        use Role::*;
        assert_eq!(
            back_rank(518).unwrap(),
            [Rook, Knight, Bishop, Queen, King, Bishop, Knight, Rook]
        );
        assert_eq!(
            back_rank(0).unwrap(),
            [Bishop, Bishop, Queen, Knight, Knight, Rook, King, Rook]
        );
        assert_eq!(
            back_rank(959).unwrap(),
            [Rook, King, Rook, Knight, Knight, Queen, Bishop, Bishop]
        );
        assert!(back_rank(960).is_err());
    }

    #[test]
    fn all_distinct_and_valid() {
        let mut seen = std::collections::HashSet::new();
        for n in 0..CHESS960_POSITIONS {
            let rank = back_rank(n).unwrap();
            assert!(seen.insert(rank));
            let files = |role| {
                rank.iter()
                    .enumerate()
                    .filter(move |(_, r)| **r == role)
                    .map(|(i, _)| i)
            };
            let bishops: Vec<usize> = files(Role::Bishop).collect();
            assert_ne!(
                bishops[0] % 2,
                bishops[1] % 2,
                "{n}: bishops on opposite colours"
            );
            let rooks: Vec<usize> = files(Role::Rook).collect();
            let king = files(Role::King).next().unwrap();
            assert!(
                rooks[0] < king && king < rooks[1],
                "{n}: king between rooks"
            );
            let pos = start_position(n, Variant::Chess960).unwrap();
            assert_eq!(number_of(&pos), Some(n));
        }
    }
}

//! Squares, files, ranks and colours: the coordinates every other module speaks.

use std::fmt;
use std::ops::Not;

/// A side. White moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Color {
    /// White, who moves first.
    White = 0,
    /// Black.
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// 0 for White, 1 for Black: an index into per-colour arrays.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `w` or `b`, as in FEN.
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }

    /// Lower-case name, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// The rank a side's pieces start on (rank 1 for white).
    #[inline(always)]
    pub const fn back_rank(self) -> Rank {
        match self {
            Color::White => Rank::First,
            Color::Black => Rank::Eighth,
        }
    }

    /// `rank` seen from this side (white's rank 2 is black's rank 7).
    #[inline(always)]
    pub const fn relative_rank(self, rank: Rank) -> Rank {
        match self {
            Color::White => rank,
            Color::Black => Rank::ALL[7 - rank as usize],
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A file, `a` to `h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs)] // the variants are the files a to h
pub enum File {
    A = 0,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
}

impl File {
    /// Every file, a first.
    pub const ALL: [File; 8] = [
        File::A,
        File::B,
        File::C,
        File::D,
        File::E,
        File::F,
        File::G,
        File::H,
    ];

    /// 0 for the a-file to 7 for the h-file.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The file with this index; `None` from 8 on.
    pub const fn from_index(i: usize) -> Option<File> {
        if i < 8 { Some(File::ALL[i]) } else { None }
    }

    /// Parses a lower-case file letter.
    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='h' => Some(File::ALL[c as usize - 'a' as usize]),
            _ => None,
        }
    }

    /// `a` to `h`.
    pub const fn char(self) -> char {
        (b'a' + self as u8) as char
    }

    /// `A` to `H`, as Chess960 castling rights in FEN name a rook's file.
    pub const fn upper_char(self) -> char {
        (b'A' + self as u8) as char
    }
}

/// A rank, 1 to 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs)] // the variants are the ranks 1 to 8, in words
pub enum Rank {
    First = 0,
    Second,
    Third,
    Fourth,
    Fifth,
    Sixth,
    Seventh,
    Eighth,
}

impl Rank {
    /// Every rank, the first first.
    pub const ALL: [Rank; 8] = [
        Rank::First,
        Rank::Second,
        Rank::Third,
        Rank::Fourth,
        Rank::Fifth,
        Rank::Sixth,
        Rank::Seventh,
        Rank::Eighth,
    ];

    /// 0 for the first rank to 7 for the eighth.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The rank with this index; `None` from 8 on.
    pub const fn from_index(i: usize) -> Option<Rank> {
        if i < 8 { Some(Rank::ALL[i]) } else { None }
    }

    /// The rank of `1` to `8`; `None` for anything else.
    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '1'..='8' => Some(Rank::ALL[c as usize - '1' as usize]),
            _ => None,
        }
    }

    /// `1` to `8`.
    pub const fn char(self) -> char {
        (b'1' + self as u8) as char
    }
}

/// One of the 64 squares, a1 = 0, b1 = 1, ..., h8 = 63.
#[rustfmt::skip]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
#[allow(missing_docs)] // the variants are the 64 squares, named as on the board
pub enum Square {
    A1 = 0, B1, C1, D1, E1, F1, G1, H1,
    A2, B2, C2, D2, E2, F2, G2, H2,
    A3, B3, C3, D3, E3, F3, G3, H3,
    A4, B4, C4, D4, E4, F4, G4, H4,
    A5, B5, C5, D5, E5, F5, G5, H5,
    A6, B6, C6, D6, E6, F6, G6, H6,
    A7, B7, C7, D7, E7, F7, G7, H7,
    A8, B8, C8, D8, E8, F8, G8, H8,
}

impl Square {
    /// Every square, a1 first.
    pub const ALL: [Square; 64] = {
        let mut all = [Square::A1; 64];
        let mut i = 0;
        while i < 64 {
            all[i] = Square::new(i as u8);
            i += 1;
        }
        all
    };

    /// The square with this index; the index is masked to 0..64.
    #[inline(always)]
    pub const fn new(index: u8) -> Square {
        // SAFETY: Square is repr(u8) with the 64 discriminants 0..=63, and the mask keeps
        // the value in that range.
        unsafe { std::mem::transmute::<u8, Square>(index & 63) }
    }

    /// The square with this index (a1 = 0, b1 = 1, ..., h8 = 63); `None` from 64 on.
    pub const fn from_index(index: usize) -> Option<Square> {
        if index < 64 {
            Some(Square::new(index as u8))
        } else {
            None
        }
    }

    /// The square on `file` and `rank`.
    #[inline(always)]
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square::new(rank as u8 * 8 + file as u8)
    }

    /// 0 for a1 to 63 for h8, rank by rank.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The square's file.
    #[inline(always)]
    pub const fn file(self) -> File {
        File::ALL[(self as usize) & 7]
    }

    /// The square's rank.
    #[inline(always)]
    pub const fn rank(self) -> Rank {
        Rank::ALL[(self as usize) >> 3]
    }

    /// The square `delta` steps away in index order, if on the board.
    #[inline(always)]
    pub const fn offset(self, delta: i8) -> Option<Square> {
        let i = self as i8 + delta;
        if i >= 0 && i < 64 {
            Some(Square::new(i as u8))
        } else {
            None
        }
    }

    /// The same square seen from the other side (a1 <-> a8).
    #[inline(always)]
    pub const fn flip_vertical(self) -> Square {
        Square::new(self as u8 ^ 56)
    }

    /// `a1` is dark; the colour complex matters for insufficient material.
    pub const fn is_light(self) -> bool {
        (self.file() as u8 + self.rank() as u8) % 2 == 1
    }

    /// Parses a square name such as `e4`.
    pub fn parse(text: &str) -> Option<Square> {
        let mut chars = text.chars();
        let file = File::from_char(chars.next()?)?;
        let rank = Rank::from_char(chars.next()?)?;
        if chars.next().is_some() {
            return None;
        }
        Some(Square::from_coords(file, rank))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

//! Standard Algebraic Notation: written with minimal disambiguation and `+`/`#`, read
//! leniently (`O-O`/`0-0`, `e8=Q`/`e8Q`, trailing `+ # ! ?`).

use super::bitboard::Bitboard;
use super::illegal::{CastleSide, IllegalMove};
use super::moves::{Move, MoveList};
use super::piece::Role;
use super::position::Position;
use super::square::{File, Rank, Square};

/// Longest SAN accepted (the longest real SAN, `Qa1xb2=Q+`-like, is under 10 characters).
pub const MAX_SAN_LEN: usize = 16;

/// Why a SAN string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SanError {
    /// Not SAN.
    #[error("'{text}' is not SAN: {why}")]
    Syntax {
        /// The text as given (at most 24 characters of it).
        text: String,
        /// What is wrong with its form.
        why: &'static str,
    },
    /// More than one legal move fits.
    #[error("ambiguous move {text}: it could be {}", candidates.join(" or "))]
    Ambiguous {
        /// The text as given.
        text: String,
        /// Every legal move that fits, in SAN.
        candidates: Vec<String>,
    },
    /// Well-formed, but no legal move fits.
    #[error("illegal move {text}: {reason}")]
    Illegal {
        /// The text as given.
        text: String,
        /// Why the move is not legal.
        reason: IllegalMove,
    },
}

/// SAN as written, before it is matched against a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SanText {
    Castle(CastleSide),
    Normal {
        role: Role,
        file: Option<File>,
        rank: Option<Rank>,
        to: Square,
        promotion: Option<Role>,
    },
}

fn parse_syntax(text: &str) -> Result<SanText, &'static str> {
    parse_syntax_with(text, false)
}

/// SAN syntax; `king_promotions` also reads `=K` (antichess).
pub(crate) fn parse_syntax_with(
    text: &str,
    king_promotions: bool,
) -> Result<SanText, &'static str> {
    if text.len() > MAX_SAN_LEN {
        return Err("too long");
    }
    let core = text.trim_end_matches(['+', '#', '!', '?']);
    match core {
        "O-O" | "0-0" | "o-o" => return Ok(SanText::Castle(CastleSide::King)),
        "O-O-O" | "0-0-0" | "o-o-o" => return Ok(SanText::Castle(CastleSide::Queen)),
        "" => return Err("empty"),
        _ => {}
    }
    if !core.is_ascii() {
        return Err("unexpected character");
    }
    let mut s = core.as_bytes();
    let role = match s[0] {
        b'N' => Some(Role::Knight),
        b'B' => Some(Role::Bishop),
        b'R' => Some(Role::Rook),
        b'Q' => Some(Role::Queen),
        b'K' => Some(Role::King),
        b'P' => Some(Role::Pawn),
        b'a'..=b'h' => None,
        _ => return Err("a move starts with a piece letter (N, B, R, Q, K) or a pawn's file"),
    };
    let role = match role {
        Some(r) => {
            s = &s[1..];
            r
        }
        None => Role::Pawn,
    };
    // Promotion suffix: "=Q", "Q", "=q", "q".
    let mut promotion = None;
    if let Some((&last, rest)) = s.split_last()
        && let Some(p) = Role::from_char(last as char)
        && (last.is_ascii_uppercase()
            || rest.last() == Some(&b'=')
            || rest.last().is_some_and(u8::is_ascii_digit))
    {
        let allowed = match p {
            Role::Queen | Role::Rook | Role::Bishop | Role::Knight => true,
            Role::King => king_promotions,
            Role::Pawn => false,
        };
        if !allowed {
            return Err("a pawn promotes to Q, R, B or N");
        }
        promotion = Some(p);
        s = rest;
        if s.last() == Some(&b'=') {
            s = &s[..s.len() - 1];
        }
    }
    if s.len() < 2 {
        return Err("no destination square");
    }
    let (head, dest) = s.split_at(s.len() - 2);
    let to = std::str::from_utf8(dest)
        .ok()
        .and_then(Square::parse)
        .ok_or("no destination square")?;
    let head = match head.last() {
        Some(b'x' | b':') => &head[..head.len() - 1],
        _ => head,
    };
    let (mut file, mut rank) = (None, None);
    for &c in head {
        match c {
            b'a'..=b'h' if file.is_none() && rank.is_none() => file = File::from_char(c as char),
            b'1'..=b'8' if rank.is_none() => rank = Rank::from_char(c as char),
            _ => return Err("unexpected character before the destination"),
        }
    }
    if promotion.is_some() && role != Role::Pawn {
        return Err("only pawns promote");
    }
    Ok(SanText::Normal {
        role,
        file,
        rank,
        to,
        promotion,
    })
}

impl Position {
    /// The move in SAN, with `+` or `#`, disambiguated only as far as needed.
    ///
    /// ```
    /// use chess_service::rules::{Position, Variant};
    ///
    /// let pos = Position::from_fen("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", Variant::Standard).unwrap();
    /// let m = pos.parse_uci("a1a8").unwrap();
    /// assert_eq!(pos.san(m), "Ra8+");
    /// let m = pos.parse_uci("h1d1").unwrap();
    /// assert_eq!(pos.san(m), "Rhd1");
    /// ```
    pub fn san(&self, m: Move) -> String {
        self.san_among(m, &self.rivals_list(m))
    }

    /// The moves `m` may need disambiguating from: only a knight, bishop, rook or queen
    /// ever does, so pawn and king moves (castling too) skip generating the list.
    fn rivals_list(&self, m: Move) -> MoveList {
        if matches!(m.role, Role::Pawn | Role::King) {
            MoveList::new()
        } else {
            self.legal_moves()
        }
    }

    /// The SAN of every move of `legal`, which must be this position's complete legal move
    /// list: one generation serves every move's disambiguation (listing 40 moves with
    /// [`Position::san`] would generate the list 40 times).
    pub fn san_all(&self, legal: &[Move]) -> Vec<String> {
        legal.iter().map(|&m| self.san_among(m, legal)).collect()
    }

    /// The SAN of `m`, disambiguated against `legal` (this position's legal moves).
    fn san_among(&self, m: Move, legal: &[Move]) -> String {
        let mut san = self.san_without_suffix_among(m, legal);
        let after = self.after(m);
        if after.is_check() {
            san.push(if after.has_legal_move() { '+' } else { '#' });
        }
        san
    }

    /// SAN without the check suffix.
    pub fn san_without_suffix(&self, m: Move) -> String {
        self.san_without_suffix_among(m, &self.rivals_list(m))
    }

    pub(crate) fn san_without_suffix_among(&self, m: Move, legal: &[Move]) -> String {
        if m.is_castle() {
            return if m.is_king_side_castle() {
                "O-O".into()
            } else {
                "O-O-O".into()
            };
        }
        let mut san = String::with_capacity(8);
        let capture = self.is_capture(m);
        if m.role == Role::Pawn {
            if capture {
                san.push(m.from.file().char());
            }
        } else {
            san.push(m.role.upper_char());
            // Disambiguate against other pieces of the same kind that reach `to`.
            let others: Bitboard = legal
                .iter()
                .filter(|o| {
                    o.role == m.role
                        && o.to == m.to
                        && o.from != m.from
                        && !o.is_castle()
                        && !o.is_drop()
                })
                .map(|o| o.from)
                .collect();
            if others.any() {
                let same_rank = (others & Bitboard::rank(m.from.rank())).any();
                let same_file = (others & Bitboard::file(m.from.file())).any();
                if same_rank || !same_file {
                    san.push(m.from.file().char());
                }
                if same_file {
                    san.push(m.from.rank().char());
                }
            }
        }
        if capture {
            san.push('x');
        }
        san.push(m.to.file().char());
        san.push(m.to.rank().char());
        if let Some(p) = m.promotion() {
            san.push('=');
            san.push(p.upper_char());
        }
        san
    }

    /// Parses SAN into a legal move of this position. It is read leniently (`Nf3`, `Ng1f3`,
    /// `N1f3`, `O-O` or `0-0`, a missing `+`); an ambiguous move lists its candidates.
    ///
    /// ```
    /// use chess_service::rules::{Position, SanError, Variant};
    ///
    /// let pos = Position::new();
    /// assert_eq!(pos.uci(pos.parse_san("Nf3").unwrap()), "g1f3");
    /// assert_eq!(pos.parse_san("Ng1f3").unwrap(), pos.parse_san("Nf3").unwrap());
    ///
    /// let knights = Position::from_fen("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", Variant::Standard).unwrap();
    /// match knights.parse_san("Nd2") {
    ///     Err(SanError::Ambiguous { candidates, .. }) => assert_eq!(candidates, ["Nbd2", "Nfd2"]),
    ///     other => panic!("expected ambiguity, got {other:?}"),
    /// }
    /// ```
    pub fn parse_san(&self, text: &str) -> Result<Move, SanError> {
        let parsed = parse_syntax(text).map_err(|why| SanError::Syntax {
            text: text.chars().take(24).collect(),
            why,
        })?;
        let illegal = |reason| SanError::Illegal {
            text: text.to_string(),
            reason,
        };
        let legal = self.legal_moves();
        match parsed {
            SanText::Castle(side) => legal
                .iter()
                .find(|m| m.is_castle() && m.is_king_side_castle() == (side == CastleSide::King))
                .copied()
                .ok_or_else(|| {
                    illegal(
                        self.explain_castling(side)
                            .unwrap_or(IllegalMove::NoCastlingRight {
                                color: self.turn(),
                                side,
                            }),
                    )
                }),
            SanText::Normal {
                role,
                file,
                rank,
                to,
                promotion,
            } => {
                let fits = |from: Square| {
                    file.is_none_or(|f| from.file() == f) && rank.is_none_or(|r| from.rank() == r)
                };
                let candidates: Vec<Move> = legal
                    .iter()
                    .filter(|m| {
                        !m.is_castle()
                            && m.role == role
                            && m.to == to
                            && fits(m.from)
                            && m.promotion() == promotion
                    })
                    .copied()
                    .collect();
                match candidates.as_slice() {
                    [m] => Ok(*m),
                    [] => Err(illegal(self.explain_san(role, to, promotion, &fits))),
                    many => Err(SanError::Ambiguous {
                        text: text.to_string(),
                        candidates: many.iter().map(|m| self.san(*m)).collect(),
                    }),
                }
            }
        }
    }

    fn explain_san(
        &self,
        role: Role,
        to: Square,
        promotion: Option<Role>,
        fits: &dyn Fn(Square) -> bool,
    ) -> IllegalMove {
        let ours = self.pieces(self.turn(), role);
        let reaching: Vec<Square> = ours
            .into_iter()
            .filter(|&from| fits(from) && self.pattern_reaches(from, to))
            .collect();
        match reaching.first() {
            Some(&from) => self.explain_illegal(from, to, promotion),
            None => IllegalMove::NoPieceReaches { role, to },
        }
    }

    /// Parses a move written either in UCI or in SAN.
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveTextError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(MoveTextError::Empty);
        }
        if text.len() > MAX_SAN_LEN {
            return Err(MoveTextError::TooLong { len: text.len() });
        }
        if super::uci::UciText::looks_like(text) {
            // Long algebraic that is also valid SAN (e.g. a pawn "e2e4") means the same.
            return self.parse_uci(text).map_err(MoveTextError::Uci);
        }
        self.parse_san(text).map_err(MoveTextError::San)
    }
}

/// Why move text (UCI or SAN) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveTextError {
    /// No text.
    #[error("the move is empty")]
    Empty,
    /// Longer than any move is written.
    #[error("the move text is {len} bytes; at most {MAX_SAN_LEN} are accepted")]
    TooLong {
        /// The text's length in bytes.
        len: usize,
    },
    /// Looked like UCI and was refused as UCI.
    #[error(transparent)]
    Uci(#[from] super::uci::UciError),
    /// Read as SAN and refused.
    #[error(transparent)]
    San(#[from] SanError),
    /// Read in a lichess variant's notation and refused.
    #[error(transparent)]
    Variant(#[from] super::variant::VariantMoveError),
}

impl MoveTextError {
    /// Malformed text (as opposed to a well-formed move that is illegal or ambiguous here).
    pub fn is_syntax(&self) -> bool {
        matches!(
            self,
            MoveTextError::Empty
                | MoveTextError::TooLong { .. }
                | MoveTextError::Uci(super::uci::UciError::Syntax { .. })
                | MoveTextError::San(SanError::Syntax { .. })
                | MoveTextError::Variant(super::variant::VariantMoveError::Syntax { .. })
        )
    }

    /// SAN that fits more than one legal move.
    pub fn is_ambiguous(&self) -> bool {
        matches!(
            self,
            MoveTextError::San(SanError::Ambiguous { .. })
                | MoveTextError::Variant(super::variant::VariantMoveError::Ambiguous { .. })
        )
    }

    /// The move text as the caller gave it (cut short when it was malformed); none when
    /// it was empty or too long to be a move.
    pub fn text(&self) -> Option<&str> {
        match self {
            MoveTextError::Empty | MoveTextError::TooLong { .. } => None,
            MoveTextError::Uci(
                super::uci::UciError::Syntax { text, .. }
                | super::uci::UciError::Illegal { text, .. },
            ) => Some(text),
            MoveTextError::San(
                SanError::Syntax { text, .. }
                | SanError::Illegal { text, .. }
                | SanError::Ambiguous { text, .. },
            ) => Some(text),
            MoveTextError::Variant(
                super::variant::VariantMoveError::Syntax { text, .. }
                | super::variant::VariantMoveError::Illegal { text, .. }
                | super::variant::VariantMoveError::Ambiguous { text, .. },
            ) => Some(text),
        }
    }

    /// The illegality reason, when the move was well formed but not legal.
    pub fn illegal_reason(&self) -> Option<&IllegalMove> {
        match self {
            MoveTextError::Uci(super::uci::UciError::Illegal { reason, .. })
            | MoveTextError::San(SanError::Illegal { reason, .. }) => Some(reason),
            _ => None,
        }
    }
}

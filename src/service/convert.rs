//! Domain -> protobuf conversion at the service's edge: rules, lifecycle and registry
//! types become `chess.v1` messages (as `From` where one value maps to one message).
//! Request fields are read in [`super::validate`].

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::lifecycle::{
    ClockReading, ClockStart, Event, EventRecord, GameMeta, Match, Opening, Start, Status,
    TimeControl,
};
use crate::pb;
use crate::registry::PlayedMove;
use crate::rules;
use crate::rules::variant::{AnyPosition, VariantKind};
use crate::rules::{Color, Game, GamePosition, GameRules, Move, Variant};
use crate::service::game_key::GameKey;
use crate::service::views::View;

impl From<Variant> for pb::Variant {
    fn from(variant: Variant) -> pb::Variant {
        match variant {
            Variant::Standard => pb::Variant::Standard,
            Variant::Chess960 => pb::Variant::Chess960,
        }
    }
}

impl From<GameRules> for pb::Variant {
    fn from(rules: GameRules) -> pb::Variant {
        match rules {
            GameRules::Chess(variant) => variant.into(),
            GameRules::Lichess(kind) => kind.into(),
        }
    }
}

impl From<VariantKind> for pb::Variant {
    fn from(kind: VariantKind) -> pb::Variant {
        match kind {
            VariantKind::Crazyhouse => pb::Variant::Crazyhouse,
            VariantKind::Atomic => pb::Variant::Atomic,
            VariantKind::Antichess => pb::Variant::Antichess,
            VariantKind::Horde => pb::Variant::Horde,
            VariantKind::RacingKings => pb::Variant::RacingKings,
            VariantKind::KingOfTheHill => pb::Variant::KingOfTheHill,
            VariantKind::ThreeCheck => pb::Variant::ThreeCheck,
        }
    }
}

impl From<Color> for pb::Color {
    fn from(color: Color) -> pb::Color {
        match color {
            Color::White => pb::Color::White,
            Color::Black => pb::Color::Black,
        }
    }
}

impl From<Status> for pb::GameStatus {
    fn from(status: Status) -> pb::GameStatus {
        match status {
            Status::InProgress => pb::GameStatus::InProgress,
            Status::Checkmate { .. } => pb::GameStatus::Checkmate,
            Status::Stalemate => pb::GameStatus::Stalemate,
            Status::InsufficientMaterial => pb::GameStatus::DrawInsufficientMaterial,
            Status::FivefoldRepetition => pb::GameStatus::DrawFivefoldRepetition,
            Status::SeventyFiveMoves => pb::GameStatus::DrawSeventyFiveMoves,
            Status::VariantWin { .. } => pb::GameStatus::VariantWin,
            Status::VariantDraw => pb::GameStatus::VariantDraw,
            Status::Resignation { .. } => pb::GameStatus::Resignation,
            Status::DrawAgreement => pb::GameStatus::DrawAgreement,
            Status::DrawClaimedThreefold => pb::GameStatus::DrawClaimedThreefold,
            Status::DrawClaimedFiftyMoves => pb::GameStatus::DrawClaimedFiftyMoves,
            Status::OutOfTime { .. } => pb::GameStatus::OutOfTime,
            Status::DrawTimeoutInsufficientMaterial => {
                pb::GameStatus::DrawTimeoutInsufficientMaterial
            }
            Status::DrawDeadPosition => pb::GameStatus::DrawDeadPosition,
            Status::DrawTimeoutUnwinnable => pb::GameStatus::DrawTimeoutUnwinnable,
        }
    }
}

fn winner_to_pb(status: Status) -> pb::Color {
    status
        .winner()
        .map_or(pb::Color::Unspecified, pb::Color::from)
}

fn opt_color_to_pb(color: Option<Color>) -> i32 {
    color.map_or(pb::Color::Unspecified, pb::Color::from) as i32
}

impl From<TimeControl> for pb::TimeControl {
    fn from(tc: TimeControl) -> pb::TimeControl {
        pb::TimeControl {
            initial_ms: tc.initial_ms(),
            increment_ms: tc.increment_ms(),
            // ON_CREATE is answered as UNSPECIFIED (which means it), so that a request
            // that named no clock start reads the same as the game it made.
            clock_start: match tc.clock_start() {
                ClockStart::OnCreate => pb::ClockStart::Unspecified,
                ClockStart::AfterFirstMoves => pb::ClockStart::AfterFirstMoves,
            } as i32,
        }
    }
}

impl From<Opening> for pb::Opening {
    fn from(o: Opening) -> pb::Opening {
        pb::Opening {
            eco: o.eco.to_string(),
            name: o.name.to_string(),
            ply: ply_u32(o.ply),
        }
    }
}

impl From<&ClockReading> for pb::Clock {
    fn from(c: &ClockReading) -> pb::Clock {
        pb::Clock {
            time_control: Some(c.control.into()),
            white_remaining_ms: c.remaining(Color::White),
            black_remaining_ms: c.remaining(Color::Black),
            running: opt_color_to_pb(c.running),
            as_of_unix_ms: c.as_of_ms,
        }
    }
}

impl From<PlayedMove> for pb::Move {
    fn from(played: PlayedMove) -> pb::Move {
        move_with_san(&played.before, played.mv, played.san)
    }
}

/// Moves a running clock's reading forward to `now`: the running side's time goes down
/// by the time passed (never below zero, never backwards). Lets a cached view show the
/// clocks of the moment it is served. A stopped clock keeps the instant it stopped.
pub fn advance_clock(clock: &mut pb::Clock, now_ms: u64) {
    if now_ms <= clock.as_of_unix_ms {
        return;
    }
    let passed = now_ms - clock.as_of_unix_ms;
    let remaining = if clock.running == pb::Color::White as i32 {
        &mut clock.white_remaining_ms
    } else if clock.running == pb::Color::Black as i32 {
        &mut clock.black_remaining_ms
    } else {
        return;
    };
    *remaining = remaining.saturating_sub(passed);
    clock.as_of_unix_ms = now_ms;
}

/// Describes a legal move of `pos`.
pub fn move_to_pb(pos: &GamePosition, m: Move) -> pb::Move {
    move_with_san(pos, m, pos.san(m))
}

/// Describes a legal move of `pos` whose SAN is known. Check and mate come from the SAN
/// suffix the rules engine writes (`+`, `#`), so the position after the move is not
/// searched again. Drops (crazyhouse) have a `drop` piece and no `from_square`.
pub fn move_with_san(pos: &GamePosition, m: Move, san: String) -> pb::Move {
    let checkmate = san.ends_with('#');
    let check = checkmate || san.ends_with('+');
    let role_text = |role: rules::Role| role.char().to_string();
    pb::Move {
        uci: pos.uci(m),
        san,
        from_square: if m.is_drop() {
            String::new()
        } else {
            m.from.to_string()
        },
        to_square: m.king_to().to_string(),
        promotion: m.promotion().map(role_text).unwrap_or_default(),
        capture: pos.is_capture(m),
        check,
        checkmate,
        castle: m.is_castle(),
        en_passant: m.is_en_passant(),
        drop: if m.is_drop() {
            role_text(m.role)
        } else {
            String::new()
        },
    }
}

/// Describes a legal move of a lichess variant position (a position given as FEN).
pub fn variant_move_to_pb(pos: &AnyPosition, m: Move) -> pb::Move {
    move_to_pb(&GamePosition::Lichess(*pos), m)
}

/// Where a lichess variant position taken alone stands (no history), as the rules read
/// it ([`rules::Status::of_game_position`], python-chess's order), and the winner.
pub fn variant_position_status(pos: &AnyPosition) -> (pb::GameStatus, Option<Color>) {
    let status = Status::from(rules::Status::of_game_position(&GamePosition::Lichess(
        *pos,
    )));
    (pb::GameStatus::from(status), status.winner())
}

/// The stateless LegalMoves answer for a lichess variant position given as FEN: all its
/// moves whatever its status (none once the variant has ended it), sorted by UCI text.
pub fn variant_legal_moves(pos: &AnyPosition) -> pb::LegalMovesResponse {
    let mut moves: Vec<pb::Move> = pos
        .legal_moves()
        .iter()
        .map(|&m| variant_move_to_pb(pos, m))
        .collect();
    moves.sort_unstable_by(|a, b| a.uci.cmp(&b.uci));
    let (status, winner) = variant_position_status(pos);
    pb::LegalMovesResponse {
        moves,
        status: status as i32,
        in_check: pos.is_check(),
        fen: pos.to_fen(),
        ply: 0,
        winner: winner.map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        version: 0,
    }
}

/// Describes all legal moves of `pos` (`legal` must be the complete list), sorted by UCI
/// text for stable output. The reference the fast encoder ([`super::wire`]) is tested
/// against, and the answer for a variant game's moves (drops, which that encoder does
/// not write).
pub fn moves_to_pb(pos: &GamePosition, legal: &[Move]) -> Vec<pb::Move> {
    let sans = match pos {
        GamePosition::Chess(p) => p.san_all(legal),
        GamePosition::Lichess(p) => legal.iter().map(|&m| p.san(m)).collect(),
    };
    let mut out: Vec<pb::Move> = legal
        .iter()
        .zip(sans)
        .map(|(&m, san)| move_with_san(pos, m, san))
        .collect();
    out.sort_unstable_by(|a, b| a.uci.cmp(&b.uci));
    out
}

/// The legal moves of a position taken alone (stateless LegalMoves by FEN): all its
/// moves whatever its status, and the status of the position itself. The reference the
/// fast encoder ([`super::wire`]) is tested against.
#[cfg(test)]
pub fn position_legal_moves(pos: &rules::Position) -> pb::LegalMovesResponse {
    let moves = pos.legal_moves();
    let status = Status::from(rules::Status::of_position(pos));
    pb::LegalMovesResponse {
        moves: moves_to_pb(&GamePosition::Chess(*pos), &moves),
        status: pb::GameStatus::from(status) as i32,
        in_check: pos.is_check(),
        fen: pos.to_fen(),
        ply: 0,
        winner: status
            .winner()
            .map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        version: 0,
    }
}

/// The legal moves playable in a game now (none once it has ended, on the board or off).
/// The reference the fast encoder ([`super::wire`]) is tested against, and a variant
/// game's answer.
pub fn game_legal_moves(m: &Match) -> pb::LegalMovesResponse {
    let game = m.game();
    let pos = game.position();
    let status = m.status();
    let moves = if status.is_over() {
        rules::MoveList::new()
    } else {
        pos.legal_moves()
    };
    pb::LegalMovesResponse {
        moves: moves_to_pb(pos, &moves),
        status: pb::GameStatus::from(status) as i32,
        in_check: pos.is_check(),
        fen: pos.to_fen(),
        ply: ply_u32(game.ply()),
        winner: status
            .winner()
            .map_or(pb::Color::Unspecified, pb::Color::from) as i32,
        version: m.version(),
    }
}

/// A ply as the proto's `uint32` (a game would need four billion moves to overflow).
pub fn ply_u32(ply: usize) -> u32 {
    u32::try_from(ply).unwrap_or(u32::MAX)
}

/// The game as the API shows it; `san` holds the SAN of each move played. The clocks are
/// read as of the running clock's start (the view depends only on the game's state, so it
/// can be cached); [`advance_clock`] brings them to the moment of serving. The basic view
/// leaves out the history (moves, SAN, PGN), so that neither its size nor its cost grows
/// with the game.
pub fn game_to_pb(meta: &GameMeta, m: &Match, san: &[String], view: View) -> pb::Game {
    let full = view == View::Full;
    let game = m.game();
    let pos = game.position();
    let status = m.status();
    let going = !status.is_over();
    pb::Game {
        // The key holds the tenant: answers show the plain id and the tenant apart.
        game_id: GameKey::plain_id(&meta.id).to_string(),
        tenant: GameKey::tenant_of(&meta.id).to_string(),
        variant: pb::Variant::from(game.rules()) as i32,
        initial_fen: game.start().to_fen(),
        fen: pos.to_fen(),
        moves: if full { game.uci_moves() } else { Vec::new() },
        san_moves: if full { san.to_vec() } else { Vec::new() },
        ply: ply_u32(game.ply()),
        side_to_move: pb::Color::from(pos.turn()) as i32,
        in_check: pos.is_check(),
        status: pb::GameStatus::from(status) as i32,
        winner: winner_to_pb(status) as i32,
        can_claim_threefold: going && game.can_claim_threefold(),
        can_claim_fifty_moves: going && game.can_claim_fifty_moves(),
        pgn: if full {
            crate::lifecycle::pgn::to_pgn(m, san, &meta.tags)
        } else {
            String::new()
        },
        chess960_position: chess960_number(meta),
        clock: m.clock_at(0).as_ref().map(pb::Clock::from),
        draw_offered_by: opt_color_to_pb(m.offer()),
        version: m.version(),
        opening: m.opening().map(pb::Opening::from),
        tags: meta
            .tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn chess960_number(meta: &GameMeta) -> Option<u32> {
    match meta.start {
        Start::Chess960(n) => Some(n),
        _ => None,
    }
}

/// One version of a game's history as a spectator gets it.
pub fn event_to_pb(meta: &GameMeta, r: &EventRecord) -> pb::GameEvent {
    use pb::game_event::Kind;
    let moved = |r: &EventRecord| r.moved.map(|(pos, m)| move_to_pb(&pos, m));
    let by = opt_color_to_pb(r.by);
    let ended = |r: &EventRecord| {
        Kind::GameEnded(pb::GameEnded {
            status: pb::GameStatus::from(r.status) as i32,
            winner: winner_to_pb(r.status) as i32,
            color: by,
        })
    };
    let kind = match r.event {
        None => Kind::Started(pb::GameStarted {
            variant: pb::Variant::from(r.position.rules()) as i32,
            initial_fen: r.position.to_fen(),
            chess960_position: chess960_number(meta),
            time_control: r.clock.as_ref().map(|c| pb::TimeControl::from(c.control)),
        }),
        Some(Event::Move(_)) => Kind::MovePlayed(pb::MovePlayed {
            r#move: moved(r),
            color: by,
        }),
        Some(Event::Undo) => Kind::MoveUndone(pb::MoveUndone {
            undone: moved(r),
            color: by,
        }),
        Some(Event::DrawOffered(_)) => Kind::DrawOffered(pb::DrawOffered { color: by }),
        Some(Event::DrawDeclined) => Kind::DrawDeclined(pb::DrawDeclined {
            color: by,
            lapsed: false,
        }),
        Some(Event::DrawLapsed) => Kind::DrawDeclined(pb::DrawDeclined {
            color: by,
            lapsed: true,
        }),
        Some(
            Event::DrawAccepted
            | Event::Resigned(_)
            | Event::DrawClaimed { .. }
            | Event::FlagFell
            | Event::FlagFellUnwinnable
            | Event::DeadPosition,
        ) => ended(r),
        Some(Event::TimeAdded { ms, .. }) => Kind::TimeAdded(pb::TimeAdded { color: by, ms }),
    };
    let pos = &r.position;
    pb::GameEvent {
        game_id: GameKey::plain_id(&meta.id).to_string(),
        version: r.version,
        at_unix_ms: r.at_ms.unwrap_or(0),
        kind: Some(kind),
        state: Some(pb::GameSnapshot {
            ply: ply_u32(r.ply),
            fen: pos.to_fen(),
            side_to_move: pb::Color::from(pos.turn()) as i32,
            in_check: pos.is_check(),
            status: pb::GameStatus::from(r.status) as i32,
            winner: winner_to_pb(r.status) as i32,
            clock: r.clock.as_ref().map(pb::Clock::from),
            draw_offered_by: opt_color_to_pb(r.offer),
        }),
    }
}

/// Human-readable description of a start (and time control), for messages.
pub fn describe_start(meta: &GameMeta, m: &Match) -> String {
    let game: &Game = m.game();
    let start = match (&meta.start, meta.variant) {
        (Start::Standard, GameRules::Chess(_)) => "the standard start".to_string(),
        (Start::Standard, GameRules::Lichess(kind)) => format!("the {kind} start"),
        (Start::Chess960(n), _) => format!("Chess960 position {n}"),
        (Start::Fen(_), GameRules::Chess(Variant::Chess960)) => {
            format!("Chess960 FEN {}", game.start().to_fen())
        }
        (Start::Fen(_), GameRules::Chess(Variant::Standard)) => {
            format!("FEN {}", game.start().to_fen())
        }
        (Start::Fen(_), GameRules::Lichess(kind)) => {
            format!("{kind} FEN {}", game.start().to_fen())
        }
    };
    match m.time_control() {
        Some(tc) => format!(
            "{start}, time control {} ms + {} ms{}",
            tc.initial_ms(),
            tc.increment_ms(),
            match tc.clock_start() {
                ClockStart::OnCreate => "",
                ClockStart::AfterFirstMoves => ", clocks starting after both first moves",
            }
        ),
        None => format!("{start}, untimed"),
    }
}

/// URL-safe base64 (RFC 4648 section 5) without padding, for server-made game ids and
/// page tokens. Their spelling is a compatibility contract (ids and tokens handed out
/// stay valid): `base64url_matches_rfc4648_vectors` pins it.
pub fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_matches_rfc4648_vectors() {
        assert_eq!(base64url(b""), "");
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }

    #[test]
    fn castling_move_shows_the_king_destination_in_chess960_too() {
        // Chess960 position with king on b1 and rooks on a1 and h1 (castling both ways).
        let pos = rules::Position::from_fen(
            "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w KQkq - 0 1",
            Variant::Chess960,
        )
        .expect("legal Chess960 FEN");
        let castle = pos.parse_move("O-O").expect("king side castling is legal");
        let m = move_to_pb(&pos.into(), castle);
        assert_eq!(
            (m.uci.as_str(), m.from_square.as_str(), m.to_square.as_str()),
            ("b1h1", "b1", "g1")
        );
        assert!(m.castle && !m.capture && !m.check);
    }

    #[test]
    fn mate_flags_come_from_the_position() {
        let pos = rules::Position::from_fen(
            "rnbqkbnr/pppp1ppp/8/4p3/6P1/5P2/PPPPP2P/RNBQKBNR b KQkq - 0 2",
            Variant::Standard,
        )
        .expect("legal FEN");
        let m = move_to_pb(&pos.into(), pos.parse_move("Qh4").expect("legal"));
        assert_eq!(m.san, "Qh4#");
        assert!(m.check && m.checkmate && !m.capture);
        let list = position_legal_moves(&rules::Position::new());
        assert_eq!(list.moves.len(), 20);
        assert!(
            list.moves.windows(2).all(|w| w[0].uci < w[1].uci),
            "sorted by UCI"
        );
    }
}

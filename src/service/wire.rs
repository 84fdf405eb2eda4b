//! LegalMoves answers encoded once and sent as bytes.
//!
//! A LegalMoves answer is ~30-50 `Move` messages of four strings each. Building them as
//! `pb::Move` values, cloning them from a cache and encoding them again on every call was
//! most of the handler's cost, so the server's generated code (see `build/proto.rs`)
//! answers LegalMoves with [`EncodedLegalMoves`] instead: the protobuf bytes of a
//! `chess.v1.LegalMovesResponse`, made once per game state (or per FEN, see
//! `fen_cache.rs`) by [`encode_legal_moves`], which writes them straight from the rules'
//! moves without building the messages. Callers see the same bytes the generated message
//! would have produced (checked by the tests below on every suite position).

use bytes::{BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType};

use crate::lifecycle::Status;
use crate::pb;

use crate::rules::{self, Move, Position, Variant};

/// A `chess.v1.LegalMovesResponse` already encoded: sending it copies the bytes into the
/// response body, nothing else. Cloning shares them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EncodedLegalMoves(Bytes);

impl EncodedLegalMoves {
    /// The encoded message.
    pub fn bytes(&self) -> &Bytes {
        &self.0
    }

    /// An answer built as a message (the lichess variants' answers, which are not on
    /// the hot path the direct encoder serves).
    pub fn from_message(message: &pb::LegalMovesResponse) -> EncodedLegalMoves {
        EncodedLegalMoves(Bytes::from(prost::Message::encode_to_vec(message)))
    }
}

impl std::fmt::Debug for EncodedLegalMoves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EncodedLegalMoves({} bytes)", self.0.len())
    }
}

impl prost::Message for EncodedLegalMoves {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    /// The server never decodes this type; if something does, every field is kept as it
    /// came (re-encoded field by field), so decoding and encoding again round-trips.
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl bytes::Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        use prost::encoding::{bytes as pbytes, fixed32, fixed64, skip_field, uint64};
        let mut out = Vec::from(std::mem::take(&mut self.0));
        match wire_type {
            WireType::Varint => {
                let mut v = 0u64;
                uint64::merge(wire_type, &mut v, buf, ctx)?;
                uint64::encode(tag, &v, &mut out);
            }
            WireType::SixtyFourBit => {
                let mut v = 0u64;
                fixed64::merge(wire_type, &mut v, buf, ctx)?;
                fixed64::encode(tag, &v, &mut out);
            }
            WireType::ThirtyTwoBit => {
                let mut v = 0u32;
                fixed32::merge(wire_type, &mut v, buf, ctx)?;
                fixed32::encode(tag, &v, &mut out);
            }
            WireType::LengthDelimited => {
                let mut v = Vec::new();
                pbytes::merge(wire_type, &mut v, buf, ctx)?;
                pbytes::encode(tag, &v, &mut out);
            }
            // Groups do not exist in proto3 (and not in this message).
            WireType::StartGroup | WireType::EndGroup => skip_field(wire_type, tag, buf, ctx)?,
        }
        self.0 = Bytes::from(out);
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0 = Bytes::new();
    }
}

/// Field numbers of `chess.v1.Move` and `chess.v1.LegalMovesResponse` (see the proto).
mod field {
    pub const MOVE_UCI: u32 = 1;
    pub const MOVE_SAN: u32 = 2;
    pub const MOVE_FROM: u32 = 3;
    pub const MOVE_TO: u32 = 4;
    pub const MOVE_PROMOTION: u32 = 5;
    pub const MOVE_CAPTURE: u32 = 6;
    pub const MOVE_CHECK: u32 = 7;
    pub const MOVE_CHECKMATE: u32 = 8;
    pub const MOVE_CASTLE: u32 = 9;
    pub const MOVE_EN_PASSANT: u32 = 10;
    pub const RESPONSE_MOVES: u32 = 1;
    pub const RESPONSE_STATUS: u32 = 2;
    pub const RESPONSE_IN_CHECK: u32 = 3;
    pub const RESPONSE_FEN: u32 = 4;
    pub const RESPONSE_PLY: u32 = 5;
    pub const RESPONSE_WINNER: u32 = 6;
    pub const RESPONSE_VERSION: u32 = 7;
}

/// A move's UCI text (at most 5 bytes), kept inline for sorting.
#[derive(Clone, Copy)]
struct Uci {
    text: [u8; 5],
    len: u8,
}

impl Uci {
    fn of(pos: &Position, m: Move) -> Uci {
        // As `Position::uci`: standard chess writes castling as the king's step,
        // Chess960 as king-takes-rook.
        let to = if m.is_castle() && pos.variant() == Variant::Standard {
            m.king_to()
        } else {
            m.to
        };
        let mut text = [
            m.from.file().char() as u8,
            m.from.rank().char() as u8,
            to.file().char() as u8,
            to.rank().char() as u8,
            0,
        ];
        let mut len = 4;
        if let Some(p) = m.promotion() {
            text[4] = p.char() as u8;
            len = 5;
        }
        Uci { text, len }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.text[..usize::from(self.len)]
    }

    /// A number that sorts as the text does (bytes big-endian, zero-padded: a shorter
    /// text that is a prefix sorts first, as `e7e8` before `e7e8q`).
    fn sort_key(&self) -> u64 {
        self.text
            .iter()
            .fold(0u64, |key, &b| (key << 8) | u64::from(b))
    }
}

fn put_bytes(out: &mut Vec<u8>, tag: u32, value: &[u8]) {
    if value.is_empty() {
        return; // proto3: an empty string is not written
    }
    prost::encoding::encode_key(tag, WireType::LengthDelimited, out);
    prost::encoding::encode_varint(value.len() as u64, out);
    out.extend_from_slice(value);
}

fn put_bool(out: &mut Vec<u8>, tag: u32, value: bool) {
    if value {
        prost::encoding::encode_key(tag, WireType::Varint, out);
        out.push(1);
    }
}

fn put_uint(out: &mut Vec<u8>, tag: u32, value: u64) {
    if value != 0 {
        prost::encoding::encode_key(tag, WireType::Varint, out);
        prost::encoding::encode_varint(value, out);
    }
}

fn square_name(sq: crate::rules::Square) -> [u8; 2] {
    [sq.file().char() as u8, sq.rank().char() as u8]
}

/// Encodes the `chess.v1.LegalMovesResponse` for `legal` (the complete legal move list of
/// `pos`, or empty when a game has ended), `status`, `ply` and `version`: the moves
/// sorted by UCI text, each described as [`super::convert::move_to_pb`] does, written
/// directly.
pub fn encode_legal_moves(
    pos: &Position,
    legal: &[Move],
    status: Status,
    ply: u32,
    version: u64,
) -> EncodedLegalMoves {
    let sans = pos.san_all(legal);
    let mut order: Vec<(Uci, usize)> = legal
        .iter()
        .enumerate()
        .map(|(i, &m)| (Uci::of(pos, m), i))
        .collect();
    order.sort_unstable_by_key(|(uci, _)| uci.sort_key());
    // ~20 bytes per move plus the FEN; one allocation in the common case.
    let mut out = Vec::with_capacity(legal.len() * 24 + 128);
    let mut one = Vec::with_capacity(48);
    for (uci, i) in &order {
        let m = legal[*i];
        let san = sans[*i].as_bytes();
        let checkmate = san.ends_with(b"#");
        one.clear();
        put_bytes(&mut one, field::MOVE_UCI, uci.as_bytes());
        put_bytes(&mut one, field::MOVE_SAN, san);
        put_bytes(&mut one, field::MOVE_FROM, &square_name(m.from));
        put_bytes(&mut one, field::MOVE_TO, &square_name(m.king_to()));
        if let Some(p) = m.promotion() {
            put_bytes(&mut one, field::MOVE_PROMOTION, &[p.char() as u8]);
        }
        put_bool(&mut one, field::MOVE_CAPTURE, pos.is_capture(m));
        put_bool(
            &mut one,
            field::MOVE_CHECK,
            checkmate || san.ends_with(b"+"),
        );
        put_bool(&mut one, field::MOVE_CHECKMATE, checkmate);
        put_bool(&mut one, field::MOVE_CASTLE, m.is_castle());
        put_bool(&mut one, field::MOVE_EN_PASSANT, m.is_en_passant());
        // A repeated message field is written even when the message is empty.
        prost::encoding::encode_key(field::RESPONSE_MOVES, WireType::LengthDelimited, &mut out);
        prost::encoding::encode_varint(one.len() as u64, &mut out);
        out.extend_from_slice(&one);
    }
    put_uint(
        &mut out,
        field::RESPONSE_STATUS,
        pb::GameStatus::from(status) as i32 as u64,
    );
    put_bool(&mut out, field::RESPONSE_IN_CHECK, pos.is_check());
    put_bytes(&mut out, field::RESPONSE_FEN, pos.to_fen().as_bytes());
    put_uint(&mut out, field::RESPONSE_PLY, u64::from(ply));
    if let Some(winner) = status.winner() {
        put_uint(
            &mut out,
            field::RESPONSE_WINNER,
            pb::Color::from(winner) as i32 as u64,
        );
    }
    put_uint(&mut out, field::RESPONSE_VERSION, version);
    EncodedLegalMoves(Bytes::from(out))
}

/// The stateless answer for a position given as FEN: all its moves whatever its status,
/// and the status of the position taken alone.
pub fn position_legal_moves(pos: &Position) -> EncodedLegalMoves {
    let legal = pos.legal_moves();
    let status = rules::Status::of_position_with(pos, !legal.is_empty()).into();
    encode_legal_moves(pos, &legal, status, 0, 0)
}

/// The moves playable in a game now (none once it has ended), with its status and ply.
pub fn game_legal_moves(m: &crate::lifecycle::Match) -> EncodedLegalMoves {
    let game = m.game();
    let status = m.status();
    let pos = match game.position() {
        crate::rules::GamePosition::Chess(pos) => pos,
        // A variant game's answer is built as messages: its moves may be drops, which
        // the fast encoder does not write.
        crate::rules::GamePosition::Lichess(_) => {
            return EncodedLegalMoves(Bytes::from(prost::Message::encode_to_vec(
                &super::convert::game_legal_moves(m),
            )));
        }
    };
    let legal = if status.is_over() {
        crate::rules::MoveList::new()
    } else {
        pos.legal_moves()
    };
    encode_legal_moves(
        pos,
        &legal,
        status,
        super::convert::ply_u32(game.ply()),
        m.version(),
    )
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;
    use crate::lifecycle::Match;
    use crate::pb;
    use crate::rules::Color;
    use crate::service::convert;

    fn suite_positions() -> Vec<Position> {
        let mut out = Vec::new();
        for (file, variant) in [
            ("tests/data/standard.epd", Variant::Standard),
            ("tests/data/cpw.epd", Variant::Standard),
            ("tests/data/chess960.epd", Variant::Chess960),
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let text = std::fs::read_to_string(&path).expect("suite file");
            for line in text.lines() {
                let fen = line.split(';').next().unwrap_or("").trim();
                if fen.is_empty() {
                    continue;
                }
                out.push(Position::from_fen(fen, variant).expect("suite FEN"));
            }
        }
        assert!(out.len() > 600);
        out
    }

    /// Every position of the suites and the positions one move later (checks, mates,
    /// promotions, castling and en passant all occur), standard and Chess960.
    #[test]
    fn direct_encoding_is_the_generated_encoding() {
        let mut checked = 0;
        for root in suite_positions() {
            let mut positions = vec![root];
            positions.extend(root.legal_moves().iter().map(|&m| root.after(m)));
            for pos in positions {
                let reference = convert::position_legal_moves(&pos);
                let fast = position_legal_moves(&pos);
                assert_eq!(
                    fast.bytes().as_ref(),
                    reference.encode_to_vec().as_slice(),
                    "position {}",
                    pos.to_fen()
                );
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked} positions");
    }

    #[test]
    fn game_answer_is_the_generated_encoding_and_empty_after_the_end() {
        let mut game = Match::untimed(Position::new());
        for uci in ["f2f3", "e7e5", "g2g4"] {
            game.play(0, None, uci).expect("legal");
            let reference = convert::game_legal_moves(&game).encode_to_vec();
            assert_eq!(
                game_legal_moves(&game).bytes().as_ref(),
                reference.as_slice()
            );
        }
        game.play(0, None, "d8h4").expect("mate");
        let decoded =
            pb::LegalMovesResponse::decode(game_legal_moves(&game).bytes().clone()).expect("ok");
        assert!(decoded.moves.is_empty());
        assert_eq!(decoded.status(), pb::GameStatus::Checkmate);
        assert_eq!(decoded.ply, 4);
        assert_eq!(decoded.version, 4);
        assert!(decoded.in_check);
    }

    /// An ending off the board (resignation) leaves nothing to play either.
    #[test]
    fn game_answer_is_empty_after_resignation() {
        let mut game = Match::untimed(Position::new());
        game.play(0, None, "e2e4").expect("legal");
        game.resign(0, Color::Black).expect("resigns");
        let fast = game_legal_moves(&game);
        assert_eq!(
            fast.bytes().as_ref(),
            convert::game_legal_moves(&game).encode_to_vec().as_slice()
        );
        let decoded = pb::LegalMovesResponse::decode(fast.bytes().clone()).expect("ok");
        assert!(decoded.moves.is_empty());
        assert_eq!(decoded.status(), pb::GameStatus::Resignation);
    }

    #[test]
    fn decoding_and_encoding_again_round_trips() {
        let original = position_legal_moves(&Position::new());
        let again = EncodedLegalMoves::decode(original.bytes().clone()).expect("decodes");
        assert_eq!(again, original);
        let typed = pb::LegalMovesResponse::decode(again.bytes().clone()).expect("decodes");
        assert_eq!(typed.moves.len(), 20);
    }
}

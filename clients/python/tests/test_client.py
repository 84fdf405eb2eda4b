"""ChessClient against the real server: every kind of call a game needs, the typed
errors with their ErrorReason and metadata, exact retries with expected_version, the
BASIC view, and the bearer token as default metadata."""

from __future__ import annotations

import hashlib
from pathlib import Path

import chess
import grpc
import pytest
from google.rpc import error_details_pb2

from chess_service_client import (
    AbortedError,
    ChessClient,
    ChessServiceError,
    ErrorReason,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    UnauthenticatedError,
    pb,
)

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_new_game_play_and_get(client: ChessClient) -> None:
    game = client.new_game(game_id="py-basic").game
    assert game.game_id == "py-basic"
    assert game.fen == chess.STARTING_FEN
    assert (game.ply, game.version) == (0, 0)
    assert game.status == pb.GAME_STATUS_IN_PROGRESS

    played = client.play("py-basic", "e4", expected_version=game.version)
    assert played.move.uci == "e2e4"
    assert (played.move.from_square, played.move.to_square) == ("e2", "e4")
    assert played.game.ply == 1 and played.game.version == 1
    client.play("py-basic", "e7e5", expected_ply=1, color=pb.COLOR_BLACK)

    board = chess.Board()
    for uci in ("e2e4", "e7e5"):
        board.push_uci(uci)
    got = client.get_game("py-basic").game
    assert list(got.moves) == ["e2e4", "e7e5"]
    assert list(got.san_moves) == ["e4", "e5"]
    assert got.fen == board.fen()
    assert got.side_to_move == pb.COLOR_WHITE
    assert got.pgn.rstrip().endswith("1. e4 e5 *")


def test_same_game_id_is_idempotent_and_another_start_is_already_exists(
    client: ChessClient,
) -> None:
    first = client.new_game(game_id="py-idem").game
    again = client.new_game(game_id="py-idem").game
    assert again.game_id == first.game_id and again.version == first.version
    with pytest.raises(ChessServiceError) as e:
        client.new_game(game_id="py-idem", fen="8/8/8/8/8/8/8/K1k5 w - - 0 1")
    assert e.value.code == grpc.StatusCode.ALREADY_EXISTS
    assert e.value.reason == ErrorReason.GAME_ALREADY_EXISTS
    assert e.value.metadata["game_id"] == "py-idem"


def test_legal_moves_match_python_chess(client: ChessClient) -> None:
    client.new_game(game_id="py-legal")
    for move in ("e4", "d5", "exd5", "c6"):
        client.play("py-legal", move)
    board = chess.Board()
    for san in ("e4", "d5", "exd5", "c6"):
        board.push_san(san)
    by_game = client.legal_moves("py-legal")
    assert [m.uci for m in by_game.moves] == sorted(m.uci() for m in board.legal_moves)
    assert by_game.ply == 4
    capture = next(m for m in by_game.moves if m.uci == "d5c6")
    assert capture.capture and capture.san == "dxc6"
    assert (capture.from_square, capture.to_square) == ("d5", "c6")

    # Any position by FEN, stateless: a mate-in-one position's mating move is marked.
    fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    by_fen = client.legal_moves(fen=fen)
    mate = [m.uci for m in by_fen.moves if m.checkmate]
    assert mate == ["a1a8"]
    assert len(by_fen.moves) == chess.Board(fen).legal_moves.count()
    with pytest.raises(ValueError):
        client.legal_moves("py-legal", fen=fen)


def test_illegal_move_is_typed_with_its_reason(client: ChessClient) -> None:
    client.new_game(game_id="py-illegal")
    with pytest.raises(FailedPreconditionError) as e:
        client.play("py-illegal", "e2e5")
    err = e.value
    assert isinstance(err, ChessServiceError)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    assert err.reason is ErrorReason.ILLEGAL_MOVE
    assert err.reason_name == "ILLEGAL_MOVE"
    assert err.domain == "chess.v1"
    assert "e2e5" in err.message
    assert "ILLEGAL_MOVE" in str(err)


def test_invalid_move_text_names_the_field(client: ChessClient) -> None:
    client.new_game(game_id="py-text")
    with pytest.raises(InvalidArgumentError) as e:
        client.play("py-text", "not a move")
    assert e.value.reason == ErrorReason.INVALID_MOVE_TEXT
    bad_requests = e.value.details(error_details_pb2.BadRequest)
    assert [v.field for br in bad_requests for v in br.field_violations] == ["move"]


def test_not_found_carries_game_id(client: ChessClient) -> None:
    with pytest.raises(NotFoundError) as e:
        client.get_game("py-nobody")
    assert e.value.reason == ErrorReason.GAME_NOT_FOUND
    assert e.value.metadata == {"game_id": "py-nobody"}


def test_ply_and_version_mismatch_carry_metadata(client: ChessClient) -> None:
    client.new_game(game_id="py-mismatch")
    client.play("py-mismatch", "e4")
    with pytest.raises(AbortedError) as e:
        client.play("py-mismatch", "d5", expected_ply=0)
    assert e.value.reason == ErrorReason.PLY_MISMATCH
    assert e.value.metadata["current_ply"] == "1"
    assert e.value.metadata["expected_ply"] == "0"
    assert e.value.metadata["game_id"] == "py-mismatch"

    with pytest.raises(AbortedError) as e:
        client.play("py-mismatch", "d5", expected_version=7)
    assert e.value.reason == ErrorReason.VERSION_MISMATCH
    assert e.value.metadata["current_version"] == "1"
    assert e.value.metadata["expected_version"] == "7"
    # Nothing was played by the refused calls.
    assert client.get_game("py-mismatch").game.ply == 1


def test_exact_retry_with_expected_version_applies_nothing_twice(client: ChessClient) -> None:
    v0 = client.new_game(game_id="py-retry").game.version
    first = client.play("py-retry", "e4", expected_version=v0)
    # The reply "was lost": the same request again succeeds with the game as it stands.
    retry = client.play("py-retry", "e4", expected_version=v0)
    assert retry.game.version == first.game.version == v0 + 1
    assert list(retry.game.moves) == ["e2e4"]
    # Another move at the same expected version is not a retry: VERSION_MISMATCH.
    with pytest.raises(AbortedError) as e:
        client.play("py-retry", "d4", expected_version=v0)
    assert e.value.reason == ErrorReason.VERSION_MISMATCH

    # Resign, which without expected_version answers GAME_OVER when retried.
    v1 = first.game.version
    resigned = client.resign("py-retry", pb.COLOR_BLACK, expected_version=v1)
    again = client.resign("py-retry", pb.COLOR_BLACK, expected_version=v1)
    assert again.game.status == resigned.game.status == pb.GAME_STATUS_RESIGNATION
    assert again.game.winner == pb.COLOR_WHITE
    assert again.game.version == resigned.game.version
    with pytest.raises(FailedPreconditionError) as e:
        client.resign("py-retry", pb.COLOR_BLACK)
    assert e.value.reason == ErrorReason.GAME_OVER
    assert e.value.metadata["status"] == "GAME_STATUS_RESIGNATION"


def test_draw_offer_and_answer_retried_exactly(client: ChessClient) -> None:
    v = client.new_game(game_id="py-draw").game.version
    offered = client.offer_draw("py-draw", pb.COLOR_WHITE, expected_version=v).game
    assert offered.draw_offered_by == pb.COLOR_WHITE
    assert client.offer_draw("py-draw", pb.COLOR_WHITE, expected_version=v).game.version == offered.version
    with pytest.raises(FailedPreconditionError) as e:
        client.offer_draw("py-draw", pb.COLOR_WHITE)
    assert e.value.reason == ErrorReason.DRAW_OFFER_PENDING
    assert e.value.metadata["offered_by"] == "COLOR_WHITE"
    accepted = client.respond_to_draw(
        "py-draw", pb.COLOR_BLACK, True, expected_version=offered.version
    ).game
    assert accepted.status == pb.GAME_STATUS_DRAW_AGREEMENT
    same = client.respond_to_draw("py-draw", pb.COLOR_BLACK, True, expected_version=offered.version)
    assert same.game.version == accepted.version


def test_undo_and_claim(client: ChessClient) -> None:
    client.new_game(game_id="py-undo")
    g = client.play("py-undo", "Nf3").game
    undone = client.undo("py-undo", expected_version=g.version)
    assert undone.undone.uci == "g1f3" and undone.game.ply == 0
    assert client.undo("py-undo", expected_version=g.version).game.version == undone.game.version
    with pytest.raises(FailedPreconditionError) as e:
        client.undo("py-undo")
    assert e.value.reason == ErrorReason.NOTHING_TO_UNDO
    # Threefold by knight moves, claimed with the move that repeats the position.
    for move in ("Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"):
        client.play("py-undo", move)
    claimed = client.claim_draw("py-undo", pb.COLOR_BLACK, move="Ng8")
    assert claimed.move.uci == "f6g8"
    assert claimed.game.status == pb.GAME_STATUS_DRAW_CLAIMED_THREEFOLD


def test_basic_view_leaves_out_the_history(client: ChessClient) -> None:
    client.new_game(game_id="py-view")
    for move in ("e4", "e5", "Nf3", "Nc6"):
        client.play("py-view", move)
    full = client.get_game("py-view").game
    basic = client.get_game("py-view", view=pb.GAME_VIEW_BASIC).game
    assert len(full.moves) == 4 and full.pgn
    assert list(basic.moves) == [] and list(basic.san_moves) == [] and basic.pgn == ""
    assert (basic.fen, basic.ply, basic.version) == (full.fen, full.ply, full.version)
    played = client.play("py-view", "Bb5", view=pb.GAME_VIEW_BASIC)
    assert played.game.ply == 5 and list(played.game.moves) == []
    assert played.game.opening.name.startswith("Ruy Lopez")


def test_timed_game_and_add_time(client: ChessClient) -> None:
    tc = pb.TimeControl(initial_ms=60_000, increment_ms=1_000)
    game = client.new_game(game_id="py-clock", time_control=tc).game
    assert game.clock.time_control.initial_ms == 60_000
    added = client.add_time("py-clock", pb.COLOR_BLACK, 5_000, expected_version=game.version).game
    assert added.clock.black_remaining_ms == 65_000
    retried = client.add_time("py-clock", pb.COLOR_BLACK, 5_000, expected_version=game.version).game
    assert retried.clock.black_remaining_ms == 65_000 and retried.version == added.version
    untimed = client.new_game().game
    with pytest.raises(FailedPreconditionError) as e:
        client.add_time(untimed.game_id, pb.COLOR_WHITE, 1000)
    assert e.value.reason == ErrorReason.GAME_UNTIMED


def test_perft(client: ChessClient) -> None:
    assert client.perft(3).nodes == 8902
    divided = client.perft(2, divide=True)
    assert divided.nodes == 400 and len(divided.divide) == 20
    assert sum(d.nodes for d in divided.divide) == 400


def test_winnability_with_a_helpmate_python_chess_replays(client: ChessClient) -> None:
    # chasolver's README wall: black cannot mate, white still can.
    fen = "5b2/p7/Pp3k2/1Pp1pBp1/2P1P1P1/5K2/8/8 w - - 0 1"
    answer = client.winnability(fen=fen)
    assert answer.black.verdict == pb.WINNABILITY_VERDICT_UNWINNABLE
    assert answer.white.verdict == pb.WINNABILITY_VERDICT_WINNABLE
    assert not answer.dead and answer.white.nodes > 0
    board = chess.Board(fen)
    for uci in answer.white.helpmate:
        board.push_uci(uci)
    assert board.is_checkmate() and board.turn == chess.BLACK
    # A stored game's position, dead behind a wall no king can cross.
    client.new_game(game_id="py-walled", fen="8/8/1k6/1p1p1p1p/1P1P1P1P/8/8/K7 w - - 0 1")
    assert client.winnability("py-walled").dead
    with pytest.raises(InvalidArgumentError) as e:
        client.winnability(fen="not a fen")
    assert e.value.reason == ErrorReason.INVALID_FEN
    with pytest.raises(ValueError):
        client.winnability()


def _strike_castling(fen: str) -> str:
    fields = fen.split(" ")
    fields[2] = "-"
    return " ".join(fields)


def test_chess960_positions_that_need_castling(client: ChessClient) -> None:
    # The positions of tests/data/chess960_castling.txt (one for each Chess960 start
    # arrangement, 605 distinct), each also seen from Black's side: python-chess confirms
    # that castling is the winner's only mate and that every other move stalemates, so
    # only a helpmate that castles exists; the server must find it and, with the castling
    # rights struck, say UNWINNABLE.
    path = REPO_ROOT / "tests" / "data" / "chess960_castling.txt"
    fens = [l for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]
    assert len(fens) == 605
    for white_fen in fens:
        for fen in (white_fen, chess.Board(white_fen, chess960=True).mirror().fen()):
            board = chess.Board(fen, chess960=True)
            winner = board.turn
            mates = []
            for move in list(board.legal_moves):
                board.push(move)
                if board.is_checkmate():
                    mates.append(move)
                else:
                    assert board.is_stalemate(), (fen, move.uci())
                board.pop()
            assert len(mates) == 1 and board.is_castling(mates[0]), (fen, mates)
            answer = client.winnability(fen=fen, variant=pb.VARIANT_CHESS960)
            side = answer.white if winner == chess.WHITE else answer.black
            assert side.verdict == pb.WINNABILITY_VERDICT_WINNABLE, fen
            castled = False
            for uci in side.helpmate:
                move = board.parse_uci(uci)
                castled |= board.turn == winner and board.is_castling(move)
                board.push(move)
            assert board.is_checkmate() and board.turn != winner and castled, (fen, side.helpmate)
            struck = client.winnability(fen=_strike_castling(fen), variant=pb.VARIANT_CHESS960)
            side = struck.white if winner == chess.WHITE else struck.black
            assert side.verdict == pb.WINNABILITY_VERDICT_UNWINNABLE, fen


def test_token_is_sent_as_default_metadata(make_server, tmp_path) -> None:
    tokens = tmp_path / "tokens"
    digest = lambda t: hashlib.sha256(t.encode()).hexdigest()  # noqa: E731
    tokens.write_text(
        f"reader read {digest('reader-token')}\nplayer play {digest('player-token')}\n"
    )
    server = make_server("--auth-tokens", str(tokens))
    with server.client() as anonymous:
        with pytest.raises(UnauthenticatedError) as e:
            anonymous.new_game()
        assert e.value.reason == ErrorReason.TOKEN_MISSING
    with server.client(token="player-token") as player:
        game = player.new_game(game_id="py-auth").game
        assert player.play("py-auth", "e4").game.ply == 1
    with server.client(token="reader-token") as reader:
        assert reader.get_game("py-auth").game.version == game.version + 1
        with pytest.raises(PermissionDeniedError) as e:
            reader.play("py-auth", "e5")
        assert e.value.reason == ErrorReason.ROLE_FORBIDS
        assert e.value.metadata["role"] == "read"
    with server.client(token="wrong") as stranger:
        with pytest.raises(UnauthenticatedError) as e:
            stranger.get_game("py-auth")
        assert e.value.reason == ErrorReason.TOKEN_UNKNOWN


def test_wrapping_an_existing_channel_and_per_call_deadline(server) -> None:
    channel = grpc.insecure_channel(server.address)
    try:
        client = ChessClient(channel, timeout=None)
        assert client.new_game(game_id="py-channel").game.game_id == "py-channel"
        # A deadline too short for a big perft: DEADLINE_EXCEEDED, typed.
        with pytest.raises(ChessServiceError) as e:
            client.perft(7, timeout=0.2)
        assert e.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        channel.close()

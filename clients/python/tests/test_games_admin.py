"""ImportGame, ListGames, DeleteGame and NewGame's PGN tags through the client.

The server side of these is implemented by its own branches of issue 15; until those are
merged the server answers UNIMPLEMENTED (and ignores tags) and these tests fail, as they
should."""

from __future__ import annotations

import io

import chess
import chess.pgn
import pytest

from chess_service_client import (
    AbortedError,
    ChessClient,
    ErrorReason,
    InvalidArgumentError,
    NotFoundError,
    pb,
)

SCHOLARS_MATE = """[Event "Casual"]
[Site "Here"]
[White "Ann"]
[Black "Bob"]
[Result "1-0"]

1. e4 e5 2. Bc4 {a comment} Nc6 3. Qh5 Nf6?? 4. Qxf7# 1-0
"""

RESIGNED = """[Event "Club"]
[Result "0-1"]

1. d4 d5 2. c4 e6 0-1
"""


def test_new_game_tags_reach_the_game_and_its_pgn(client: ChessClient) -> None:
    game = client.new_game(game_id="tags-1", tags={"White": "Ann", "Black": "Bob", "Board": "3"}).game
    assert dict(game.tags) == {"White": "Ann", "Black": "Bob", "Board": "3"}
    pgn = client.get_game("tags-1").game.pgn
    assert '[White "Ann"]' in pgn and '[Black "Bob"]' in pgn and '[Board "3"]' in pgn
    with pytest.raises(InvalidArgumentError) as e:
        client.new_game(tags={"Result": "1-0"})
    assert e.value.reason == ErrorReason.INVALID_TAG
    assert e.value.metadata["tag"] == "Result"


def test_import_a_small_pgn(client: ChessClient) -> None:
    game = client.import_game(SCHOLARS_MATE, game_id="imp-1").game
    board = chess.pgn.read_game(io.StringIO(SCHOLARS_MATE)).end().board()
    assert game.game_id == "imp-1"
    assert list(game.san_moves) == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    assert game.fen == board.fen()
    assert game.status == pb.GAME_STATUS_CHECKMATE and game.winner == pb.COLOR_WHITE
    assert game.tags["White"] == "Ann" and game.tags["Event"] == "Casual"
    assert "Result" not in game.tags  # the server owns it
    # Stored: GetGame answers it; the same id and text again answer the same game.
    assert client.get_game("imp-1").game.moves == game.moves
    assert client.import_game(SCHOLARS_MATE, game_id="imp-1").game.version == game.version

    resigned = client.import_game(RESIGNED, game_id="imp-2").game
    assert resigned.status == pb.GAME_STATUS_RESIGNATION and resigned.winner == pb.COLOR_BLACK
    assert resigned.ply == 4


def test_import_errors_are_typed(client: ChessClient) -> None:
    with pytest.raises(InvalidArgumentError) as e:
        client.import_game("1. e4 e5 2. Ke3 *", game_id="imp-bad")
    assert e.value.reason == ErrorReason.PGN_ILLEGAL_MOVE
    assert e.value.metadata["ply"] == "2"
    assert e.value.metadata["token"] == "Ke3"
    assert e.value.metadata["move_number"] == "2"
    with pytest.raises(NotFoundError):
        client.get_game("imp-bad")
    checked = client.import_game(RESIGNED, game_id="imp-dry", validate_only=True).game
    assert checked.ply == 4
    with pytest.raises(NotFoundError):
        client.get_game("imp-dry")


def test_list_games_in_id_order_with_pages_and_filters(client: ChessClient) -> None:
    ids = [f"list-{i:02d}" for i in range(7)]
    for game_id in reversed(ids):  # created out of order
        client.new_game(game_id=game_id)
    client.resign("list-03", pb.COLOR_WHITE)
    client.resign("list-05", pb.COLOR_BLACK)

    first = client.list_games(page_size=3)
    # A page may hold fewer than asked for (AIP-158), never more, and starts at the front.
    assert 1 <= len(first.games) <= 3
    assert [g.game_id for g in first.games] == ids[: len(first.games)]
    assert first.next_page_token
    assert all(list(g.moves) == [] and g.pgn == "" for g in first.games), "BASIC view"
    listed = [g.game_id for g in client.iter_games(page_size=3)]
    assert listed == ids, "every game once, in game-id order, across pages"
    ended = [g.game_id for g in client.iter_games(page_size=2, status_filter=pb.STATUS_FILTER_ENDED)]
    assert ended == ["list-03", "list-05"]
    running = [
        g.game_id for g in client.iter_games(status_filter=pb.STATUS_FILTER_IN_PROGRESS)
    ]
    assert running == [i for i in ids if i not in ("list-03", "list-05")]
    with pytest.raises(InvalidArgumentError) as e:
        client.list_games(page_token="not-a-token")
    assert e.value.reason == ErrorReason.INVALID_PAGE_TOKEN
    with pytest.raises(InvalidArgumentError) as e:
        client.list_games(page_size=-1)
    assert e.value.reason == ErrorReason.INVALID_PAGE_SIZE


def test_delete_then_get_is_not_found(client: ChessClient) -> None:
    game = client.new_game(game_id="del-1").game
    client.play("del-1", "e4")
    with pytest.raises(AbortedError) as e:
        client.delete_game("del-1", expected_version=game.version)
    assert e.value.reason == ErrorReason.VERSION_MISMATCH
    assert client.get_game("del-1").game.ply == 1, "a refused delete deletes nothing"
    client.delete_game("del-1", expected_version=game.version + 1)
    with pytest.raises(NotFoundError) as e:
        client.get_game("del-1")
    assert e.value.reason == ErrorReason.GAME_NOT_FOUND
    with pytest.raises(NotFoundError):
        client.delete_game("del-1")
    client.delete_game("del-1", allow_missing=True)  # a retry after a lost reply
    assert "del-1" not in [g.game_id for g in client.iter_games()]


def test_a_follower_of_a_deleted_game_ends_with_not_found(client: ChessClient) -> None:
    client.new_game(game_id="del-watched")
    events = iter(client.follow("del-watched", backoff_initial=0.01))
    assert next(events).version == 0
    client.delete_game("del-watched")
    # The server ends the open stream; the follower reconnects and learns the game is gone.
    with pytest.raises(NotFoundError):
        next(events)

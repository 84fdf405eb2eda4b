"""GameFollower against the real server: every event exactly once and in order, across
a kill -9 and a SIGTERM restart of the server (same port, same data directory), across
resyncs of a spectator that fell behind (a small --watch-buffer), and its errors."""

from __future__ import annotations

import threading
import time
from typing import List

import pytest

from chess_service_client import (
    ChessClient,
    FollowerGaveUp,
    GameFollower,
    NotFoundError,
    pb,
)

MOVES = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]


class Collector:
    """Runs a follower in a thread, keeping what it yields."""

    def __init__(self, follower: GameFollower) -> None:
        self.follower = follower
        self.events: List[pb.GameEvent] = []
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self.follower:
                self.events.append(event)
        except BaseException as e:  # reported by the test
            self.error = e

    def wait_for_version(self, version: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.events and self.events[-1].version >= version:
                return
            if self.error is not None:
                raise self.error
            time.sleep(0.02)
        raise AssertionError(f"the follower did not reach version {version}: {self.versions()}")

    def join(self, timeout: float = 30) -> None:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the follower did not finish"
        if self.error is not None:
            raise self.error

    def versions(self) -> List[int]:
        return [e.version for e in self.events]


def assert_history(events: List[pb.GameEvent], game: pb.Game) -> None:
    """Versions 0..game.version each exactly once, and the moves those events played."""
    assert [e.version for e in events] == list(range(game.version + 1))
    stack: List[str] = []
    for e in events:
        kind = e.WhichOneof("kind")
        if kind == "move_played":
            stack.append(e.move_played.move.uci)
        elif kind == "move_undone":
            assert stack.pop() == e.move_undone.undone.uci
    assert stack == list(game.moves)
    assert events[-1].state.fen == game.fen
    assert events[-1].state.status == game.status


def test_follows_a_whole_game_in_order(client: ChessClient) -> None:
    client.new_game(game_id="f-basic")
    for move in MOVES[:4]:
        client.play("f-basic", move)
    follower = client.follow("f-basic", stop_when_over=True)
    collector = Collector(follower)
    collector.wait_for_version(4)  # the backlog
    for move in MOVES[4:]:
        client.play("f-basic", move)
    client.offer_draw("f-basic", pb.COLOR_WHITE)
    client.respond_to_draw("f-basic", pb.COLOR_BLACK, False)
    client.undo("f-basic")
    client.resign("f-basic", pb.COLOR_WHITE)
    collector.join()
    game = client.get_game("f-basic").game
    assert_history(collector.events, game)
    assert game.status == pb.GAME_STATUS_RESIGNATION
    assert follower.reconnects == 0 and follower.resyncs == 0
    assert follower.last_version == game.version


@pytest.mark.parametrize("hard", [True, False], ids=["kill-9", "sigterm"])
def test_follows_across_a_server_restart(server, hard: bool) -> None:
    with server.client() as client:
        client.new_game(game_id="f-restart")
        for move in MOVES[:3]:
            client.play("f-restart", move)
        follower = client.follow(
            "f-restart", stop_when_over=True, backoff_initial=0.05, backoff_max=0.5
        )
        collector = Collector(follower)
        collector.wait_for_version(3)

        server.restart(hard=hard)  # same port, same data directory
        # The same client (its channel reconnects) plays on after the restart.
        deadline = time.monotonic() + 20
        while True:
            try:
                client.play("f-restart", MOVES[3], expected_version=3)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        for move in MOVES[4:]:
            client.play("f-restart", move)
        client.resign("f-restart", pb.COLOR_BLACK)
        collector.join()
        game = client.get_game("f-restart").game
    assert_history(collector.events, game)
    assert game.version == len(MOVES) + 1
    assert follower.reconnects >= 1, "the follower reconnected"
    assert follower.dropped >= 1, "the stream was dropped (UNAVAILABLE) by the restart"
    assert follower.duplicates == 0


def test_follows_across_resyncs(make_server) -> None:
    server = make_server("--watch-buffer", "4")
    pairs = 150
    with server.client() as player, server.client(
        # A small HTTP/2 window, so the transport cannot hold much for the slow reader.
        options=[("grpc.http2.lookahead_bytes", 1024), ("grpc.http2.bdp_probe", 0)]
    ) as spectator:
        player.new_game(game_id="f-resync")
        follower = spectator.follow("f-resync", stop_when_over=True, backoff_initial=0.01)
        events = iter(follower)
        got = [next(events)]  # version 0; now it stops reading while the game goes on
        for _ in range(pairs):
            player.play("f-resync", "Nf3", view=pb.GAME_VIEW_BASIC)
            player.undo("f-resync", view=pb.GAME_VIEW_BASIC)
        player.play("f-resync", "e4")
        player.resign("f-resync", pb.COLOR_WHITE)
        got.extend(events)  # reads the rest: until the resignation
        game = player.get_game("f-resync").game
    assert_history(got, game)
    assert game.version == 2 * pairs + 2
    assert follower.resyncs >= 1, "the slow spectator was told to resync"
    assert follower.reconnects >= follower.resyncs
    assert follower.duplicates == 0


def test_unknown_game_raises_not_found(client: ChessClient) -> None:
    with pytest.raises(NotFoundError):
        next(iter(client.follow("f-nobody")))


def test_gives_up_after_max_attempts_when_the_server_stays_down(server) -> None:
    with server.client() as client:
        client.new_game(game_id="f-down")
        follower = client.follow("f-down", backoff_initial=0.01, backoff_max=0.05, max_attempts=3)
        events = iter(follower)
        assert next(events).version == 0
        server.kill()
        with pytest.raises(FollowerGaveUp) as e:
            next(events)
        assert e.value.attempts == 3
        assert follower.dropped >= 1


def test_close_ends_a_follower_waiting_for_events(client: ChessClient) -> None:
    client.new_game(game_id="f-close")
    follower = client.follow("f-close")
    collector = Collector(follower)
    collector.wait_for_version(0)
    follower.close()
    collector.join(timeout=5)
    assert collector.versions() == [0]

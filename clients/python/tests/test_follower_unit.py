"""GameFollower's bookkeeping against scripted streams: what a correct server never sends
(a repeated event, a gap) is handled too, without skipping or repeating an event."""

from __future__ import annotations

from typing import Iterator, List, Union

import grpc
import pytest

from chess_service_client import (
    GameFollower,
    PermissionDeniedError,
    UnavailableError,
    pb,
)

Item = Union[int, str, Exception]  # an event version, "resync:N", or an error to raise


class ScriptedStream:
    def __init__(self, items: List[Item]) -> None:
        self.items = items
        self.cancelled = False

    def __iter__(self) -> Iterator[pb.WatchGameResponse]:
        for item in self.items:
            if isinstance(item, Exception):
                raise item
            if isinstance(item, str):
                yield pb.WatchGameResponse(
                    resync=pb.Resync(resume_from_version=int(item.split(":")[1]))
                )
                continue
            status = pb.GAME_STATUS_RESIGNATION if item == 6 else pb.GAME_STATUS_IN_PROGRESS
            yield pb.WatchGameResponse(
                event=pb.GameEvent(
                    game_id="g", version=item, state=pb.GameSnapshot(ply=item, status=status)
                )
            )

    def cancel(self) -> None:
        self.cancelled = True


class ScriptedClient:
    """Stands in for ChessClient.watch_game: one scripted stream per call."""

    def __init__(self, scripts: List[List[Item]]) -> None:
        self.scripts = scripts
        self.asked: List[int] = []
        self.streams: List[ScriptedStream] = []

    def watch_game(self, game_id: str, *, from_version: int = 0) -> ScriptedStream:
        assert game_id == "g"
        self.asked.append(from_version)
        stream = ScriptedStream(self.scripts[len(self.asked) - 1])
        self.streams.append(stream)
        return stream


def unavailable() -> UnavailableError:
    return UnavailableError(grpc.StatusCode.UNAVAILABLE, "Socket closed")


def test_drops_duplicates_reconnects_after_errors_resyncs_and_gaps() -> None:
    client = ScriptedClient(
        [
            [0, 1, 2, unavailable()],  # the connection drops
            [2, 3, "resync:4"],  # 2 again (dropped), then told to resync
            [4, 6],  # a gap: 5 is missing, so it reconnects from 5
            [5, 6],  # 6 ends the game
        ]
    )
    follower = GameFollower(client, "g", stop_when_over=True, backoff_initial=0)  # type: ignore[arg-type]
    versions = [e.version for e in follower]
    assert versions == [0, 1, 2, 3, 4, 5, 6]
    assert client.asked == [0, 3, 4, 5]
    assert (follower.dropped, follower.duplicates, follower.resyncs, follower.reconnects) == (1, 1, 1, 3)
    assert follower.last_version == 6
    assert all(s.cancelled for s in client.streams)


def test_other_errors_are_raised_typed_at_once() -> None:
    denied = PermissionDeniedError(grpc.StatusCode.PERMISSION_DENIED, "no", reason_name="ROLE_FORBIDS")
    client = ScriptedClient([[0, denied], [1]])
    events = iter(GameFollower(client, "g", backoff_initial=0))  # type: ignore[arg-type]
    assert next(events).version == 0
    with pytest.raises(PermissionDeniedError):
        next(events)
    assert client.asked == [0]

"""GameFollower: a WatchGame spectator that survives dropped streams and resyncs."""

from __future__ import annotations

import random
import threading
from typing import TYPE_CHECKING, Iterator, Optional

import grpc

from . import _errors
from ._proto.chess.v1 import chess_pb2 as pb

if TYPE_CHECKING:
    from ._client import ChessClient, WatchStream

#: gRPC codes after which the follower reconnects: the server went away (killed,
#: restarting: UNAVAILABLE, also for a reset connection) or ended the stream oddly.
RETRYABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})


class FollowerGaveUp(Exception):
    """The follower failed `max_attempts` times in a row without receiving an event."""

    def __init__(self, attempts: int, last_error: Optional[BaseException]) -> None:
        self.attempts = attempts
        self.last_error = last_error
        super().__init__(f"gave up following after {attempts} attempts: {last_error}")


class GameFollower:
    """Follows a game's WatchGame stream: yields each `GameEvent` exactly once, in version
    order, from `from_version` on.

    When the stream drops (UNAVAILABLE: a reset connection, a killed or restarting
    server), ends without an error, or ends with a `resync` (this spectator fell behind),
    it reconnects with `from_version` = the last version it yielded + 1, after an
    exponential backoff with jitter (`backoff_initial` doubling up to `backoff_max`
    seconds; reset once an event arrives). An event it already yielded is dropped; a gap
    (never sent by a correct server) is not skipped: the follower reconnects from the
    missing version. Any other error (NOT_FOUND, PERMISSION_DENIED, ...) is raised as the
    typed `ChessServiceError`. After `max_attempts` consecutive failed connections
    (None: never) it raises `FollowerGaveUp`.

    With `stop_when_over`, iteration ends after the first event whose state is no longer
    GAME_STATUS_IN_PROGRESS. `close()` (from any thread) ends the iteration.

    Counters for callers and tests: `reconnects` (streams opened after the first),
    `resyncs` (resync messages received), `dropped` (connections lost with an error),
    `duplicates` (events received again and not yielded).
    """

    def __init__(
        self,
        client: "ChessClient",
        game_id: str,
        *,
        from_version: int = 0,
        stop_when_over: bool = False,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        max_attempts: Optional[int] = 20,
    ) -> None:
        self.client = client
        self.game_id = game_id
        self.next_version = from_version
        self.stop_when_over = stop_when_over
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.max_attempts = max_attempts
        self.reconnects = 0
        self.resyncs = 0
        self.dropped = 0
        self.duplicates = 0
        self._closed = threading.Event()
        self._stream: Optional["WatchStream"] = None
        self._lock = threading.Lock()

    @property
    def last_version(self) -> Optional[int]:
        """The version of the last event yielded (None before the first)."""
        return self.next_version - 1 if self.next_version > 0 else None

    def close(self) -> None:
        """Stops following: the iteration ends (also when blocked waiting for an event)."""
        self._closed.set()
        with self._lock:
            if self._stream is not None:
                self._stream.cancel()

    def __iter__(self) -> Iterator[pb.GameEvent]:
        failures = 0
        backoff = self.backoff_initial
        opened = 0
        last_error: Optional[BaseException] = None
        while not self._closed.is_set():
            if opened:
                self.reconnects += 1
            opened += 1
            with self._lock:
                if self._closed.is_set():
                    return
                stream = self.client.watch_game(self.game_id, from_version=self.next_version)
                self._stream = stream
            progressed = False
            try:
                for message in stream:
                    which = message.WhichOneof("message")
                    if which == "resync":
                        # The server names the first version not received, which is
                        # next_version; resuming from what was actually yielded is the
                        # same and can never skip one.
                        self.resyncs += 1
                        break
                    if which != "event":
                        continue  # a message kind this client does not know
                    event = message.event
                    if event.version < self.next_version:
                        self.duplicates += 1
                        continue
                    if event.version > self.next_version:
                        # A gap: reconnect from the missing version rather than skip it.
                        break
                    self.next_version = event.version + 1
                    progressed = True
                    failures = 0
                    backoff = self.backoff_initial
                    yield event
                    if self.stop_when_over and event.state.status != pb.GAME_STATUS_IN_PROGRESS:
                        return
                    if self._closed.is_set():
                        return
            except _errors.ChessServiceError as e:
                if self._closed.is_set():
                    return
                if e.code not in RETRYABLE_CODES:
                    raise
                self.dropped += 1
                last_error = e
            finally:
                with self._lock:
                    self._stream = None
                stream.cancel()
            if self._closed.is_set():
                return
            if not progressed:
                failures += 1
                if self.max_attempts is not None and failures >= self.max_attempts:
                    raise FollowerGaveUp(failures, last_error)
                self._closed.wait(backoff * (0.5 + random.random() / 2))
                backoff = min(backoff * 2, self.backoff_max)

#!/usr/bin/env python3
"""Relays a game: follows a game on one chess-server and replays every event into a game
on another server (or under another id on the same one), version for version.

    python examples/relay.py --source localhost:50051 --source-game match-7 \\
                             --target localhost:50052 --target-game match-7-mirror

Each change is sent with `expected_version` = the target's version before it (the source
event's version - 1; for a move that lapsed a draw offer, the version before the lapse,
which the move makes on the target too), so a change whose reply was lost is retried
safely (an exact retry succeeds and applies nothing twice) and a target that someone else
changed is refused with VERSION_MISMATCH instead of silently diverging. The relay can be killed at any point and started again: it reads the
target game's version and follows the source from the next one. It ends when the source
game ends. Untimed play is relayed (moves, undos, draw offers and answers, resignation,
draw claims about the position on the board); clocks are not (the target is untimed).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Optional, TypeVar

from chess_service_client import (
    ChessClient,
    NotFoundError,
    UnavailableError,
    pb,
)

T = TypeVar("T")
STANDARD_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


class NotRelayable(Exception):
    """An event this relay cannot reproduce on an untimed target."""


def with_retries(call: Callable[[], T], attempts: int = 10, delay: float = 0.2) -> T:
    """Runs `call`, again after UNAVAILABLE (the target restarting, say). Safe because
    every change below carries expected_version: a retry of an applied change succeeds
    without applying it twice."""
    for attempt in range(attempts):
        try:
            return call()
        except UnavailableError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay * (attempt + 1))
    raise AssertionError("unreachable")


def apply(
    target: ChessClient, target_id: str, event: pb.GameEvent, expected: int
) -> Optional[int]:
    """Reproduces one source event on the target, whose version is `expected` (the
    version the change is sent with); returns the target's version after it, or None for
    an event the next one reproduces together with it."""
    basic = pb.GAME_VIEW_BASIC
    kind = event.WhichOneof("kind")
    if kind == "started":
        s = event.started
        if s.HasField("chess960_position"):
            start = {"chess960_position": s.chess960_position}
        elif s.initial_fen != STANDARD_START:
            start = {"fen": s.initial_fen}
        else:
            start = {}
        game = with_retries(
            lambda: target.new_game(game_id=target_id, variant=s.variant, view=basic, **start)
        ).game
    elif kind == "move_played":
        m = event.move_played
        game = with_retries(
            lambda: target.play(
                target_id, m.move.uci, color=m.color, expected_version=expected, view=basic
            )
        ).game
    elif kind == "move_undone":
        u = event.move_undone
        game = with_retries(
            lambda: target.undo(target_id, color=u.color, expected_version=expected, view=basic)
        ).game
    elif kind == "draw_offered":
        c = event.draw_offered.color
        game = with_retries(
            lambda: target.offer_draw(target_id, c, expected_version=expected, view=basic)
        ).game
    elif kind == "draw_declined":
        d = event.draw_declined
        if d.lapsed:
            # The offer lapsed because the other side moved: the next event is that move,
            # and playing it on the target (expected_version still the version before the
            # lapse) makes both events there too, as one exactly retryable change.
            return None
        game = with_retries(
            lambda: target.respond_to_draw(
                target_id, d.color, False, expected_version=expected, view=basic
            )
        ).game
    elif kind == "game_ended":
        e = event.game_ended
        if e.status == pb.GAME_STATUS_RESIGNATION:
            call = lambda: target.resign(target_id, e.color, expected_version=expected, view=basic)  # noqa: E731
        elif e.status == pb.GAME_STATUS_DRAW_AGREEMENT:
            call = lambda: target.respond_to_draw(  # noqa: E731
                target_id, e.color, True, expected_version=expected, view=basic
            )
        elif e.status in (
            pb.GAME_STATUS_DRAW_CLAIMED_THREEFOLD,
            pb.GAME_STATUS_DRAW_CLAIMED_FIFTY_MOVES,
        ):
            call = lambda: target.claim_draw(target_id, e.color, expected_version=expected, view=basic)  # noqa: E731
        else:
            raise NotRelayable(f"version {event.version}: {pb.GameStatus.Name(e.status)}")
        game = with_retries(call).game
    else:
        raise NotRelayable(f"version {event.version}: a {kind} event")
    if game.version != event.version:
        raise RuntimeError(
            f"the target is at version {game.version} after relaying version {event.version}"
        )
    return game.version


def relay(
    source: ChessClient,
    source_id: str,
    target: ChessClient,
    target_id: str,
    log: Callable[[str], None] = print,
) -> pb.Game:
    """Relays `source_id` into `target_id` until the source game ends; returns the
    target game. Resumes where the target stands."""
    try:
        current = target.get_game(target_id, view=pb.GAME_VIEW_BASIC).game
        if current.status != pb.GAME_STATUS_IN_PROGRESS:
            log(f"target {target_id} already ended at version {current.version}")
            return target.get_game(target_id).game
        target_version = current.version
    except NotFoundError:
        target_version = -1  # the first event, the creation, makes it
    from_version = target_version + 1
    log(f"following {source_id} from version {from_version}")
    for event in source.follow(source_id, from_version=from_version, stop_when_over=True):
        version = apply(target, target_id, event, target_version)
        if version is not None:
            target_version = version
        what = event.WhichOneof("kind")
        if what == "move_played":
            what = f"move {event.move_played.move.san}"
        log(f"v{event.version} {what} -> " + ("(with the next)" if version is None else f"v{version}"))
    return target.get_game(target_id).game


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(description="Relay a chess-server game to another one.")
    parser.add_argument("--source", required=True, help="source server, host:port")
    parser.add_argument("--source-game", required=True, help="the game to follow")
    parser.add_argument("--target", required=True, help="target server, host:port")
    parser.add_argument("--target-game", required=True, help="the game to write")
    parser.add_argument("--token", help="bearer token for both servers")
    args = parser.parse_args(argv)
    with ChessClient.connect(args.source, token=args.token) as source, ChessClient.connect(
        args.target, token=args.token
    ) as target:
        game = relay(source, args.source_game, target, args.target_game)
    print(f"relayed: {pb.GameStatus.Name(game.status)} after {game.ply} plies, version {game.version}")
    print(" ".join(game.san_moves))
    return 0


if __name__ == "__main__":
    sys.exit(main())

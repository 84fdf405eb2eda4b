"""examples/relay.py (the README's relay) run as a program between two real servers
while a game is played on the source: the relay is killed with SIGKILL and started again,
both servers are killed and restarted under it, and the copy must still be exact,
version for version."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import List

from chess_service_client import ChessClient, NotFoundError, pb

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "relay.py"


def start_relay(source, target, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-u", str(EXAMPLE),
         "--source", source.address, "--source-game", "match-7",
         "--target", target.address, "--target-game", "match-7-mirror"],
        stdout=open(log, "a"),
        stderr=subprocess.STDOUT,
    )


def wait_synced(source: ChessClient, target: ChessClient, relay: subprocess.Popen, log: Path) -> int:
    want = source.get_game("match-7", view=pb.GAME_VIEW_BASIC).game.version
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if target.get_game("match-7-mirror", view=pb.GAME_VIEW_BASIC).game.version == want:
                return want
        except NotFoundError:
            pass
        assert relay.poll() is None, f"the relay exited early:\n{log.read_text()}"
        time.sleep(0.05)
    raise AssertionError(f"the target did not reach version {want}:\n{log.read_text()}")


def history(client: ChessClient, game_id: str) -> List[tuple]:
    out = []
    for e in client.follow(game_id, stop_when_over=True):
        out.append((e.version, e.WhichOneof("kind"), e.state.fen, e.state.status, e.state.draw_offered_by))
    return out


def test_relay_copies_a_game_exactly_through_crashes(make_server, tmp_path: Path) -> None:
    source_server, target_server = make_server(), make_server()
    log = tmp_path / "relay.log"
    with source_server.client() as source, target_server.client() as target:
        source.new_game(game_id="match-7")
        source.play("match-7", "e4")
        source.play("match-7", "c5")
        relay = start_relay(source_server, target_server, log)
        try:
            wait_synced(source, target, relay, log)
            # An offer that lapses (the offered side moves instead: two events on the
            # source, one Play on the target), an offer declined, an undo.
            source.offer_draw("match-7", pb.COLOR_BLACK)
            source.play("match-7", "Nf3")
            source.offer_draw("match-7", pb.COLOR_WHITE)
            source.respond_to_draw("match-7", pb.COLOR_BLACK, False)
            source.play("match-7", "d6")
            source.undo("match-7")
            source.play("match-7", "Nc6")
            wait_synced(source, target, relay, log)

            # The relay dies; the game goes on; a new relay resumes from the target.
            relay.kill()
            relay.wait(10)
            source.play("match-7", "d4")
            source.play("match-7", "cxd4")
            relay = start_relay(source_server, target_server, log)
            wait_synced(source, target, relay, log)

            # The source server crashes and comes back under the relay's follower; so does
            # the target, under the relay's retried changes.
            source_server.restart(hard=True)
            target_server.restart(hard=True)
            for move in ("Nxd4", "Nf6", "Nc3"):
                for _ in range(100):
                    try:
                        source.play("match-7", move)
                        break
                    except Exception:
                        time.sleep(0.1)
            source.resign("match-7", pb.COLOR_BLACK)
            assert relay.wait(30) == 0, log.read_text()
        finally:
            if relay.poll() is None:
                relay.kill()

        original = source.get_game("match-7").game
        copy = target.get_game("match-7-mirror").game
        assert list(copy.moves) == list(original.moves)
        assert list(copy.san_moves) == list(original.san_moves)
        assert (copy.fen, copy.status, copy.winner, copy.version) == (
            original.fen, original.status, original.winner, original.version
        )
        assert copy.status == pb.GAME_STATUS_RESIGNATION and copy.winner == pb.COLOR_WHITE
        # Version for version, the same history.
        assert history(target, "match-7-mirror") == history(source, "match-7")

    text = log.read_text()
    assert text.count("following match-7 from version 0") == 1
    assert "following match-7 from version 11" in text, "the second relay resumed"
    assert "relayed: GAME_STATUS_RESIGNATION after 9 plies" in text
    assert "e4 c5 Nf3 Nc6 d4 cxd4 Nxd4 Nf6 Nc3" in text

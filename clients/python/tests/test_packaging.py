"""The package imports beside python-chess, and its ErrorReason is the proto's enum."""

from __future__ import annotations

import subprocess
import sys


def test_python_chess_and_the_client_import_in_one_process() -> None:
    # A fresh interpreter, both import orders: nothing may shadow the other's `chess`.
    for first, second in (("chess", "chess_service_client"), ("chess_service_client", "chess")):
        code = f"""
import {first}, {second}
import chess, chess.pgn, chess_service_client
from chess_service_client import pb
board = chess.Board()
board.push_san("e4")
assert board.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", board.fen()
assert "site-packages" in chess.__file__ or "dist-packages" in chess.__file__, chess.__file__
assert not hasattr(chess, "v1")
assert "chess.v1" not in __import__("sys").modules
assert pb.__name__ == "chess_service_client._proto.chess.v1.chess_pb2", pb.__name__
m = pb.Move(from_square="e2", to_square="e4")
assert (m.from_square, m.to_square) == ("e2", "e4")
print("ok")
"""
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "ok"


def test_error_reason_is_the_proto_enum() -> None:
    from chess_service_client import ErrorReason
    from chess_service_client._proto.chess.v1 import error_reason_pb2

    proto = error_reason_pb2.ErrorReason
    assert {r.name: r.value for r in ErrorReason} == {
        name: proto.Value(name) for name in proto.keys()
    }
    assert ErrorReason(0) is ErrorReason.ERROR_REASON_UNSPECIFIED
    assert ErrorReason.ILLEGAL_MOVE == error_reason_pb2.ILLEGAL_MOVE
    assert len(ErrorReason) >= 55


def test_generated_modules_import_only_inside_the_package() -> None:
    from pathlib import Path

    import chess_service_client

    generated = Path(chess_service_client.__file__).parent / "_proto" / "chess" / "v1"
    for path in generated.glob("*.py"):
        text = path.read_text()
        assert "from chess.v1" not in text and "import chess." not in text, path

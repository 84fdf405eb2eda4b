"""The committed generated code is exactly what tools/generate_proto.py makes from
proto/chess/v1 with the pinned grpcio-tools: it cannot drift from the protos."""

from __future__ import annotations

import importlib.util
from pathlib import Path

CLIENT_ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location(
        "generate_proto", CLIENT_ROOT / "tools" / "generate_proto.py"
    )
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_committed_code_matches_a_fresh_generation(tmp_path: Path) -> None:
    gen = _generator()
    fresh = gen.generate(tmp_path)
    committed_dir = CLIENT_ROOT / "src" / gen.PACKAGE_PREFIX
    assert [p.name for p in fresh] == gen.GENERATED
    committed = sorted(
        p.name for p in committed_dir.iterdir() if p.is_file() and p.name != "__init__.py"
    )
    assert committed == gen.GENERATED, "generated files were added or removed"
    stale = [
        p.name for p in fresh if p.read_bytes() != (committed_dir / p.name).read_bytes()
    ]
    assert stale == [], (
        f"{stale} differ from proto/chess/v1: run "
        "`python clients/python/tools/generate_proto.py` and commit the result"
    )


def test_the_generator_sees_a_proto_change(tmp_path: Path) -> None:
    # The check above is only worth something if a changed proto changes the output.
    gen = _generator()
    protos = tmp_path / "proto"
    protos.mkdir()
    for name in gen.PROTOS:
        text = (gen.PROTO_DIR / name).read_text()
        if name == "chess.proto":
            text = text.replace("message Move {", "message Move {\n  string comment = 99;", 1)
        else:
            text = text.replace("  PGN_MULTIPLE_GAMES = 54;", "  PGN_MULTIPLE_GAMES = 54;\n  // New.\n  NEW_REASON = 999;", 1)
        (protos / name).write_text(text)
    changed = gen.generate(tmp_path / "out", proto_dir=protos)
    committed_dir = CLIENT_ROOT / "src" / gen.PACKAGE_PREFIX
    differing = {p.name for p in changed if p.read_bytes() != (committed_dir / p.name).read_bytes()}
    assert {"chess_pb2.py", "chess_pb2.pyi", "error_reason_pb2.py", "error_reason_enum.py"} <= differing
    enum_source = (tmp_path / "out" / gen.PACKAGE_PREFIX / gen.ERROR_REASON_ENUM).read_text()
    # A number no branch will take (55 and up are reserved for new reasons).
    assert "    #: New.\n    NEW_REASON = 999\n" in enum_source

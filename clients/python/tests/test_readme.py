"""Every ```python block of clients/python/README.md, run in order against a real server
(its `localhost:50051` replaced by the server's address)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(server, capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2, "the README shows its use in python blocks"
    for i, block in enumerate(blocks):
        code = block.replace("localhost:50051", server.address)
        exec(compile(code, f"README.md python block {i + 1}", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "FAILED_PRECONDITION ILLEGAL_MOVE: illegal move e7e4" in out
    # The follower printed the whole history: creation, e4, the resignation.
    assert re.search(r"^0 started ", out, re.M)
    assert re.search(r"^1 move_played ", out, re.M)
    assert re.search(r"^2 game_ended ", out, re.M)

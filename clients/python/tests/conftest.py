"""Fixtures: the real chess-server binary, started on a free loopback port with a
temporary data directory, and clients of it.

The binary is $CHESS_SERVER when set, else the repository's target/release/chess-server,
built first with `cargo build --release --bin chess-server` (a no-op when it is current).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

import pytest

from chess_service_client import ChessClient

REPO_ROOT = Path(__file__).resolve().parents[3]
_LISTENING = re.compile(r"listening on (\d+\.\d+\.\d+\.\d+:\d+)")


def _server_binary() -> Path:
    explicit = os.environ.get("CHESS_SERVER")
    if explicit:
        return Path(explicit)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--bin", "chess-server"],
        cwd=REPO_ROOT,
        check=True,
    )
    return REPO_ROOT / "target" / "release" / "chess-server"


class Server:
    """One chess-server process (restartable on the same port and data directory)."""

    def __init__(self, binary: Path, data_dir: Path, args: Sequence[str] = ()) -> None:
        self.binary = binary
        self.data_dir = data_dir
        self.args = list(args)
        self.port: Optional[int] = None
        self.proc: Optional[subprocess.Popen] = None
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.starts = 0

    @property
    def address(self) -> str:
        assert self.port is not None, "the server has not started"
        return f"127.0.0.1:{self.port}"

    def start(self) -> "Server":
        """Starts it: on port 0 the first time (a free port), then on the same port."""
        listen = f"127.0.0.1:{self.port or 0}"
        self.starts += 1
        log = open(self.log_path, "a")
        log.write(f"--- start {self.starts} on {listen}\n")
        log.flush()
        offset = self.log_path.stat().st_size
        self.proc = subprocess.Popen(
            [str(self.binary), "--listen", listen, "--data-dir", str(self.data_dir),
             "--log-format", "text", *self.args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": "info"},
        )
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(self.log_path) as f:
                f.seek(offset)
                m = _LISTENING.search(f.read())
            if m:
                self.port = int(m.group(1).rsplit(":", 1)[1])
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"chess-server did not start; its log:\n{self.log_path.read_text()}")

    def kill(self) -> None:
        """kill -9, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> int:
        """SIGTERM, then wait: the exit code (0 for a clean shutdown)."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(30)
        self.proc = None
        return code

    def restart(self, *, hard: bool = True) -> None:
        """Stops it (kill -9 when `hard`, else SIGTERM) and starts it on the same port."""
        if hard:
            self.kill()
        else:
            assert self.stop() == 0, "a SIGTERM shutdown exits 0"
        self.start()

    def client(self, **kwargs) -> ChessClient:
        return ChessClient.connect(self.address, **kwargs)


@pytest.fixture(scope="session")
def server_binary() -> Path:
    path = _server_binary()
    assert path.is_file(), f"no chess-server binary at {path}"
    return path


@pytest.fixture
def make_server(server_binary: Path, tmp_path: Path) -> Iterator:
    """Makes servers with extra flags; every one is killed at the end of the test."""
    servers: List[Server] = []

    def make(*args: str) -> Server:
        s = Server(server_binary, tmp_path / f"data{len(servers)}", args).start()
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.kill()


@pytest.fixture
def server(make_server) -> Server:
    return make_server()


@pytest.fixture
def client(server: Server) -> Iterator[ChessClient]:
    with server.client() as c:
        yield c


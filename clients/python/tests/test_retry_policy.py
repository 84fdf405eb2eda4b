"""deploy/grpc-service-config.json, loaded by grpcio as any integrator would load it:
a burst the server sheds (RESOURCE_EXHAUSTED, OVERLOADED: refused before anything ran)
is retried with backoff until every call is answered. The same burst without the config
proves that the server did shed it."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from chess_service_client import ErrorReason, from_status
from chess_service_client._proto.chess.v1 import chess_pb2, chess_pb2_grpc

REPO_ROOT = Path(__file__).resolve().parents[3]

SERVICE_CONFIG = REPO_ROOT / "deploy" / "grpc-service-config.json"
BURST = 24
# 197,281 leaves: a few milliseconds of work, long enough for the burst to overlap.
REQUEST = chess_pb2.PerftRequest(depth=4, threads=1)


def _burst(address: str, options) -> list:
    """BURST concurrent Perft calls on one channel: each answer's node count, or the
    error's (code, reason)."""
    with grpc.insecure_channel(address, options=options) as channel:
        stub = chess_pb2_grpc.ChessServiceStub(channel)
        grpc.channel_ready_future(channel).result(timeout=10)

        def call(_: int):
            try:
                return stub.Perft(REQUEST, timeout=30).nodes
            except grpc.RpcError as e:
                trailers = dict(e.trailing_metadata() or ())
                err = from_status(e.code(), e.details(), trailers.get("grpc-status-details-bin"))
                return (e.code(), err.reason)

        with ThreadPoolExecutor(BURST) as pool:
            return list(pool.map(call, range(BURST)))


def test_the_service_config_retries_a_shed_burst_until_every_call_is_answered(make_server) -> None:
    config = json.loads(SERVICE_CONFIG.read_text())
    policy = config["methodConfig"][0]["retryPolicy"]
    assert set(policy["retryableStatusCodes"]) == {"UNAVAILABLE", "RESOURCE_EXHAUSTED"}
    server = make_server("--max-in-flight", "1")

    without = _burst(server.address, [("grpc.enable_retries", 0)])
    shed = [r for r in without if isinstance(r, tuple)]
    assert shed, "the burst was not shed: the test proves nothing"
    assert all(r == (grpc.StatusCode.RESOURCE_EXHAUSTED, ErrorReason.OVERLOADED) for r in shed), shed

    with_config = _burst(
        server.address,
        [("grpc.service_config", json.dumps(config)), ("grpc.enable_retries", 1)],
    )
    assert with_config == [197_281] * BURST, [r for r in with_config if r != 197_281]

"""Hostile input against the real server, read by grpcio (issue 30): an error that
repeats a 200 KB tag name clips it, so the trailer stays small enough for grpcio to read
the error (it reported RESOURCE_EXHAUSTED, "metadata size exceeds hard limit", when the
server repeated the whole name)."""

from __future__ import annotations

import grpc

from chess_service_client import ErrorReason, InvalidArgumentError, from_status
from chess_service_client._proto.chess.v1 import chess_pb2, chess_pb2_grpc

HOSTILE_LEN = 200_000


def test_a_200_kb_tag_name_gives_a_small_trailer_read_as_invalid_tag(server) -> None:
    name = "T" * HOSTILE_LEN
    with grpc.insecure_channel(server.address) as channel:
        stub = chess_pb2_grpc.ChessServiceStub(channel)
        request = chess_pb2.NewGameRequest(game_id="hostile-tag", tags={name: "x"})
        try:
            stub.NewGame(request, timeout=10)
        except grpc.RpcError as e:
            code, message, trailers = e.code(), e.details(), e.trailing_metadata()
        else:
            raise AssertionError("a 200 KB tag name was accepted")
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, message)
    size = sum(len(k) + len(v) for k, v in trailers)
    assert size < 4096, f"a trailer of {size} bytes"
    details = dict(trailers)["grpc-status-details-bin"]
    err = from_status(code, message, details)
    assert isinstance(err, InvalidArgumentError)
    assert err.reason is ErrorReason.INVALID_TAG
    assert err.metadata["tag"].endswith(f"[clipped: {HOSTILE_LEN} bytes in all]")
    assert len(err.metadata["tag"].encode()) <= 128 + 40


def test_random_bytes_are_invalid_argument_malformed_request(server) -> None:
    with grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(
            "/chess.v1.ChessService/GetGame",
            request_serializer=lambda b: b,
            response_deserializer=lambda b: b,
        )
        try:
            call(b"\xff\xff\xff\xff", timeout=10)
        except grpc.RpcError as e:
            code, message, trailers = e.code(), e.details(), e.trailing_metadata()
        else:
            raise AssertionError("undecodable bytes were accepted")
    err = from_status(code, message, dict(trailers).get("grpc-status-details-bin"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, message)
    assert err.reason is ErrorReason.MALFORMED_REQUEST

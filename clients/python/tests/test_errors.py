"""Error translation without a server: statuses built by hand, the unknown reason."""

from __future__ import annotations

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from chess_service_client import (
    AbortedError,
    ChessServiceError,
    ErrorReason,
    UnavailableError,
    from_status,
)


def _status(code: grpc.StatusCode, message: str, reason: str, **metadata: str) -> bytes:
    info = error_details_pb2.ErrorInfo(reason=reason, domain="chess.v1", metadata=metadata)
    detail = any_pb2.Any()
    detail.Pack(info)
    return status_pb2.Status(code=code.value[0], message=message, details=[detail]).SerializeToString()


def test_known_reason_maps_to_the_enum_and_the_code_to_a_subclass() -> None:
    details = _status(
        grpc.StatusCode.ABORTED, "ply mismatch", "PLY_MISMATCH", current_ply="3", game_id="g"
    )
    err = from_status(grpc.StatusCode.ABORTED, "ply mismatch", details)
    assert type(err) is AbortedError
    assert err.reason is ErrorReason.PLY_MISMATCH
    assert err.metadata == {"current_ply": "3", "game_id": "g"}
    assert (err.code, err.message, err.domain) == (grpc.StatusCode.ABORTED, "ply mismatch", "chess.v1")


def test_unknown_reason_is_unspecified_but_keeps_the_raw_string() -> None:
    details = _status(grpc.StatusCode.UNAVAILABLE, "later", "SOMETHING_NEW", hint="x")
    err = from_status(grpc.StatusCode.UNAVAILABLE, "later", details)
    assert isinstance(err, UnavailableError)
    assert err.reason is ErrorReason.ERROR_REASON_UNSPECIFIED
    assert err.reason_name == "SOMETHING_NEW"
    assert err.metadata == {"hint": "x"}
    assert "SOMETHING_NEW" in str(err)


def test_a_status_without_details_or_with_garbage_keeps_code_and_message() -> None:
    for details in (None, b"\xff\xff not a status"):
        err = from_status(grpc.StatusCode.INTERNAL, "boom", details)
        assert isinstance(err, ChessServiceError)
        assert err.code == grpc.StatusCode.INTERNAL and err.message == "boom"
        assert err.reason is ErrorReason.ERROR_REASON_UNSPECIFIED and err.reason_name == ""
        assert err.metadata == {}

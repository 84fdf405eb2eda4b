"""Typed errors: every failed call raises a ChessServiceError (a subclass per gRPC code)
carrying the code, the `ErrorReason` from the status's `google.rpc.ErrorInfo`, its
metadata and the message."""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Type, TypeVar

import grpc
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from ._proto.chess.v1.error_reason_enum import ErrorReason as ErrorReason

M = TypeVar("M", bound=Message)

#: The ErrorInfo domain of this service's errors.
ERROR_DOMAIN = "chess.v1"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"

# ErrorReason (re-exported): `chess.v1.ErrorReason` as a Python IntEnum, generated from
# the proto (tests/test_packaging.py checks it against the protobuf descriptor). An unknown
# reason string maps to ERROR_REASON_UNSPECIFIED; the error keeps the raw string.


class ChessServiceError(Exception):
    """A failed call.

    Attributes:
        code: the gRPC status code.
        reason: the `ErrorReason` named by the ErrorInfo, ERROR_REASON_UNSPECIFIED when
            the status has no ErrorInfo or names a reason this client does not know.
        reason_name: the raw reason string ("" without ErrorInfo), kept for unknown ones.
        domain: the ErrorInfo domain ("chess.v1" for this service's own errors).
        metadata: the ErrorInfo metadata (`current_ply`, `game_id`, ...), as a dict.
        message: the status message, meant for a person.
        status: the decoded `google.rpc.Status` (all details), or None.
    """

    code: grpc.StatusCode

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason_name: str = "",
        domain: str = "",
        metadata: Optional[Mapping[str, str]] = None,
        status: Optional[status_pb2.Status] = None,
    ) -> None:
        self.code = code
        self.message = message
        self.reason_name = reason_name
        self.reason = _reason_from_name(reason_name)
        self.domain = domain
        self.metadata: Dict[str, str] = dict(metadata or {})
        self.status = status
        super().__init__(str(self))

    def __str__(self) -> str:
        reason = f" {self.reason_name}" if self.reason_name else ""
        return f"{self.code.name}{reason}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code.name}, reason={self.reason_name or None!r}, "
            f"metadata={self.metadata!r}, message={self.message!r})"
        )

    def details(self, message_type: Type[M]) -> List[M]:
        """The status details of one `google.rpc` type (BadRequest, RetryInfo, ...)."""
        found: List[M] = []
        if self.status is None:
            return found
        for any_detail in self.status.details:
            if any_detail.Is(message_type.DESCRIPTOR):
                detail = message_type()
                any_detail.Unpack(detail)
                found.append(detail)
        return found


def _reason_from_name(name: str) -> "ErrorReason":
    try:
        return ErrorReason[name]
    except KeyError:
        return ErrorReason.ERROR_REASON_UNSPECIFIED


# One subclass per gRPC code, so callers can `except NotFoundError:`.
class CancelledError(ChessServiceError):
    """CANCELLED."""


class UnknownError(ChessServiceError):
    """UNKNOWN."""


class InvalidArgumentError(ChessServiceError):
    """INVALID_ARGUMENT: a malformed request (see `reason` and the BadRequest detail)."""


class DeadlineExceededError(ChessServiceError):
    """DEADLINE_EXCEEDED."""


class NotFoundError(ChessServiceError):
    """NOT_FOUND: no such game."""


class AlreadyExistsError(ChessServiceError):
    """ALREADY_EXISTS: the game id is taken by another game."""


class PermissionDeniedError(ChessServiceError):
    """PERMISSION_DENIED: the caller's role does not cover the call."""


class ResourceExhaustedError(ChessServiceError):
    """RESOURCE_EXHAUSTED: overloaded, rate limited, disk full, too many perfts."""


class FailedPreconditionError(ChessServiceError):
    """FAILED_PRECONDITION: the rules or the game's state refuse the call."""


class AbortedError(ChessServiceError):
    """ABORTED: the game is not where the caller expected (PLY_MISMATCH, VERSION_MISMATCH)."""


class OutOfRangeError(ChessServiceError):
    """OUT_OF_RANGE."""


class UnimplementedError(ChessServiceError):
    """UNIMPLEMENTED: the server does not offer this call."""


class InternalError(ChessServiceError):
    """INTERNAL."""


class UnavailableError(ChessServiceError):
    """UNAVAILABLE: the server is unreachable, restarting or its store is down; retry."""


class DataLossError(ChessServiceError):
    """DATA_LOSS."""


class UnauthenticatedError(ChessServiceError):
    """UNAUTHENTICATED: no token, or an unknown one."""


_BY_CODE: Dict[grpc.StatusCode, Type[ChessServiceError]] = {
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.UNKNOWN: UnknownError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DATA_LOSS: DataLossError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
}


def error_class(code: grpc.StatusCode) -> Type[ChessServiceError]:
    """The exception class raised for a gRPC code."""
    return _BY_CODE.get(code, ChessServiceError)


def from_status(
    code: grpc.StatusCode, message: str, details_bin: Optional[bytes]
) -> ChessServiceError:
    """Builds the typed error from a status code, message and `grpc-status-details-bin`."""
    status: Optional[status_pb2.Status] = None
    reason_name = domain = ""
    metadata: Dict[str, str] = {}
    if details_bin:
        status = status_pb2.Status()
        try:
            status.ParseFromString(details_bin)
        except Exception:  # a peer's garbage must not hide the code and message
            status = None
    if status is not None:
        if status.message:
            message = status.message
        for any_detail in status.details:
            if any_detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                any_detail.Unpack(info)
                reason_name, domain, metadata = info.reason, info.domain, dict(info.metadata)
                break
    return error_class(code)(
        code,
        message,
        reason_name=reason_name,
        domain=domain,
        metadata=metadata,
        status=status,
    )


def from_rpc_error(error: grpc.RpcError) -> ChessServiceError:
    """Translates a grpc.RpcError (which is also a grpc.Call) into the typed error."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    details_bin: Optional[bytes] = None
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == _STATUS_DETAILS_KEY:
            details_bin = value if isinstance(value, bytes) else value.encode()
            break
    return from_status(code or grpc.StatusCode.UNKNOWN, message or "", details_bin)

"""Python client of the chess.v1 gRPC chess rules service.

    from chess_service_client import ChessClient, ErrorReason, ChessServiceError, pb

The generated protobuf code lives in `chess_service_client._proto.chess.v1` (never in a
top-level `chess` package), so this package imports beside python-chess's `chess`.
"""

from ._client import DEFAULT_CHANNEL_OPTIONS, DEFAULT_TIMEOUT, ChessClient, WatchStream
from ._errors import (
    ERROR_DOMAIN,
    AbortedError,
    AlreadyExistsError,
    CancelledError,
    ChessServiceError,
    DataLossError,
    DeadlineExceededError,
    ErrorReason,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
    UnimplementedError,
    UnknownError,
    error_class,
    from_rpc_error,
    from_status,
)
from ._follower import RETRYABLE_CODES, FollowerGaveUp, GameFollower
from ._proto.chess.v1 import chess_pb2 as pb
from ._proto.chess.v1 import chess_pb2_grpc as pb_grpc

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_CHANNEL_OPTIONS",
    "DEFAULT_TIMEOUT",
    "ERROR_DOMAIN",
    "RETRYABLE_CODES",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "ChessClient",
    "ChessServiceError",
    "DataLossError",
    "DeadlineExceededError",
    "ErrorReason",
    "FailedPreconditionError",
    "FollowerGaveUp",
    "GameFollower",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "WatchStream",
    "error_class",
    "from_rpc_error",
    "from_status",
    "pb",
    "pb_grpc",
]

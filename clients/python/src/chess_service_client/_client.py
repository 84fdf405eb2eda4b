"""ChessClient: every chess.v1.ChessService RPC as a typed method over one gRPC channel."""

from __future__ import annotations

from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Iterator,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
)

import grpc

from . import _errors
from ._proto.chess.v1 import chess_pb2 as pb
from ._proto.chess.v1 import chess_pb2_grpc

if TYPE_CHECKING:
    from ._follower import GameFollower

Metadata = Sequence[Tuple[str, str]]
T = TypeVar("T")

#: Default deadline of a unary call, in seconds (a WatchGame stream has none).
DEFAULT_TIMEOUT = 10.0

#: Channel options used by ChessClient.connect: reconnect quickly after the server comes
#: back (gRPC's own default backoff grows to two minutes), and notice a dead connection
#: under a long WatchGame stream with keepalive pings.
DEFAULT_CHANNEL_OPTIONS: Tuple[Tuple[str, Any], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 5000),
    ("grpc.keepalive_time_ms", 30000),
    ("grpc.keepalive_timeout_ms", 10000),
)


class ChessClient:
    """A client of chess.v1.ChessService.

    Every method builds the request from keyword arguments, applies the client's default
    deadline and metadata (the bearer token), and returns the response message; a failed
    call raises a `ChessServiceError` subclass with the code, `ErrorReason` and metadata.

        with ChessClient.connect("localhost:50051") as client:
            game = client.new_game(game_id="match-1").game
            client.play("match-1", "e4", expected_version=game.version)
    """

    def __init__(
        self,
        channel: grpc.Channel,
        *,
        token: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        metadata: Metadata = (),
    ) -> None:
        """Wraps an existing channel (the caller keeps owning it).

        Args:
            channel: a grpc.Channel to the server.
            token: sent as `authorization: Bearer TOKEN` on every call when set.
            timeout: the default deadline of unary calls, in seconds (None: no deadline).
            metadata: extra metadata sent on every call.
        """
        self.channel = channel
        self.stub = chess_pb2_grpc.ChessServiceStub(channel)
        self.timeout = timeout
        md = list(metadata)
        if token:
            md.append(("authorization", f"Bearer {token}"))
        self.metadata: Tuple[Tuple[str, str], ...] = tuple(md)
        self._owns_channel = False

    @classmethod
    def connect(
        cls,
        target: str,
        *,
        token: Optional[str] = None,
        timeout: Optional[float] = DEFAULT_TIMEOUT,
        metadata: Metadata = (),
        credentials: Optional[grpc.ChannelCredentials] = None,
        root_certificates: Optional[bytes] = None,
        options: Sequence[Tuple[str, Any]] = (),
    ) -> "ChessClient":
        """Opens a channel to `target` ("host:port") owned by the client (closed by close()).

        Plaintext unless `credentials` or `root_certificates` (a PEM CA, for a server
        with --tls-cert) is given. `options` are added to DEFAULT_CHANNEL_OPTIONS (a
        later option of the same name wins).
        """
        opts = list(DEFAULT_CHANNEL_OPTIONS) + list(options)
        if root_certificates is not None and credentials is None:
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
        if credentials is not None:
            channel = grpc.secure_channel(target, credentials, options=opts)
        else:
            channel = grpc.insecure_channel(target, options=opts)
        client = cls(channel, token=token, timeout=timeout, metadata=metadata)
        client._owns_channel = True
        return client

    def close(self) -> None:
        """Closes the channel if the client opened it."""
        if self._owns_channel:
            self.channel.close()

    def __enter__(self) -> "ChessClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------ plumbing

    def _md(self, metadata: Optional[Metadata]) -> Tuple[Tuple[str, str], ...]:
        return self.metadata + tuple(metadata or ())

    def call(
        self,
        method: Callable[..., T],
        request: Any,
        *,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> T:
        """Calls a unary stub method with the client's deadline and metadata; raises the
        typed error. `timeout=None` means the client's default."""
        try:
            return method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self._md(metadata),
            )
        except grpc.RpcError as e:
            raise _errors.from_rpc_error(e) from None

    # ------------------------------------------------------------------------ games

    def new_game(
        self,
        *,
        game_id: str = "",
        fen: str = "",
        variant: "pb.Variant" = pb.VARIANT_UNSPECIFIED,
        chess960_position: Optional[int] = None,
        time_control: Optional[pb.TimeControl] = None,
        tags: Optional[Mapping[str, str]] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.NewGameResponse:
        """NewGame: starts a game; with `game_id` idempotent (safe to retry)."""
        req = pb.NewGameRequest(
            game_id=game_id, fen=fen, variant=variant, tags=dict(tags or {}), view=view
        )
        if chess960_position is not None:
            req.chess960_position = chess960_position
        if time_control is not None:
            req.time_control.CopyFrom(time_control)
        return self.call(self.stub.NewGame, req, timeout=timeout, metadata=metadata)

    def get_game(
        self,
        game_id: str,
        *,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.GetGameResponse:
        """GetGame: the game as it stands."""
        req = pb.GetGameRequest(game_id=game_id, view=view)
        return self.call(self.stub.GetGame, req, timeout=timeout, metadata=metadata)

    def play(
        self,
        game_id: str,
        move: str,
        *,
        expected_ply: Optional[int] = None,
        expected_version: Optional[int] = None,
        color: "pb.Color" = pb.COLOR_UNSPECIFIED,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.PlayResponse:
        """Play: one move (UCI or SAN). Safe to retry with `expected_version` or
        `expected_ply`."""
        req = pb.PlayRequest(game_id=game_id, move=move, color=color, view=view)
        if expected_ply is not None:
            req.expected_ply = expected_ply
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.Play, req, timeout=timeout, metadata=metadata)

    def undo(
        self,
        game_id: str,
        *,
        expected_ply: Optional[int] = None,
        expected_version: Optional[int] = None,
        color: "pb.Color" = pb.COLOR_UNSPECIFIED,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.UndoResponse:
        """Undo: takes back the last move. Safe to retry with `expected_version`."""
        req = pb.UndoRequest(game_id=game_id, color=color, view=view)
        if expected_ply is not None:
            req.expected_ply = expected_ply
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.Undo, req, timeout=timeout, metadata=metadata)

    def legal_moves(
        self,
        game_id: Optional[str] = None,
        *,
        fen: Optional[str] = None,
        variant: "pb.Variant" = pb.VARIANT_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.LegalMovesResponse:
        """LegalMoves of a stored game (`game_id`) or of any position (`fen`)."""
        if (game_id is None) == (fen is None):
            raise ValueError("legal_moves takes exactly one of game_id and fen")
        req = pb.LegalMovesRequest(variant=variant)
        if game_id is not None:
            req.game_id = game_id
        else:
            req.fen = fen  # type: ignore[assignment]
        return self.call(self.stub.LegalMoves, req, timeout=timeout, metadata=metadata)

    def resign(
        self,
        game_id: str,
        color: "pb.Color",
        *,
        expected_version: Optional[int] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.ResignResponse:
        """Resign for `color`. Safe to retry with `expected_version`."""
        req = pb.ResignRequest(game_id=game_id, color=color, view=view)
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.Resign, req, timeout=timeout, metadata=metadata)

    def offer_draw(
        self,
        game_id: str,
        color: "pb.Color",
        *,
        expected_version: Optional[int] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.OfferDrawResponse:
        """OfferDraw for `color`. Safe to retry with `expected_version`."""
        req = pb.OfferDrawRequest(game_id=game_id, color=color, view=view)
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.OfferDraw, req, timeout=timeout, metadata=metadata)

    def respond_to_draw(
        self,
        game_id: str,
        color: "pb.Color",
        accept: bool,
        *,
        expected_version: Optional[int] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.RespondToDrawResponse:
        """RespondToDraw: `color` accepts or declines the pending offer."""
        req = pb.RespondToDrawRequest(game_id=game_id, color=color, accept=accept, view=view)
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.RespondToDraw, req, timeout=timeout, metadata=metadata)

    def claim_draw(
        self,
        game_id: str,
        color: "pb.Color",
        *,
        move: str = "",
        expected_ply: Optional[int] = None,
        expected_version: Optional[int] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.ClaimDrawResponse:
        """ClaimDraw (threefold or fifty moves), optionally with the announced `move`."""
        req = pb.ClaimDrawRequest(game_id=game_id, color=color, move=move, view=view)
        if expected_ply is not None:
            req.expected_ply = expected_ply
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.ClaimDraw, req, timeout=timeout, metadata=metadata)

    def add_time(
        self,
        game_id: str,
        color: "pb.Color",
        ms: int,
        *,
        expected_version: Optional[int] = None,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.AddTimeResponse:
        """AddTime: `ms` more on `color`'s clock. Safe to retry with `expected_version`."""
        req = pb.AddTimeRequest(game_id=game_id, color=color, ms=ms, view=view)
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.AddTime, req, timeout=timeout, metadata=metadata)

    def perft(
        self,
        depth: int,
        *,
        fen: str = "",
        variant: "pb.Variant" = pb.VARIANT_UNSPECIFIED,
        divide: bool = False,
        threads: int = 0,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.PerftResponse:
        """Perft: leaf nodes of the legal move tree to `depth`."""
        req = pb.PerftRequest(fen=fen, variant=variant, depth=depth, divide=divide, threads=threads)
        return self.call(self.stub.Perft, req, timeout=timeout, metadata=metadata)

    def winnability(
        self,
        game_id: Optional[str] = None,
        *,
        fen: Optional[str] = None,
        variant: "pb.Variant" = pb.VARIANT_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.WinnabilityResponse:
        """Winnability of a stored game's position (`game_id`) or of any position (`fen`):
        for each side WINNABLE (with a helpmate), UNWINNABLE or UNDETERMINED; `dead` when
        neither side can mate (FIDE 5.2.2)."""
        if (game_id is None) == (fen is None):
            raise ValueError("winnability takes exactly one of game_id and fen")
        req = pb.WinnabilityRequest(variant=variant)
        if game_id is not None:
            req.game_id = game_id
        else:
            req.fen = fen  # type: ignore[assignment]
        return self.call(self.stub.Winnability, req, timeout=timeout, metadata=metadata)

    def import_game(
        self,
        pgn: str,
        *,
        game_id: str = "",
        validate_only: bool = False,
        view: "pb.GameView" = pb.GAME_VIEW_UNSPECIFIED,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.ImportGameResponse:
        """ImportGame: one game of PGN text becomes a stored game (or is only checked)."""
        req = pb.ImportGameRequest(pgn=pgn, game_id=game_id, validate_only=validate_only, view=view)
        return self.call(self.stub.ImportGame, req, timeout=timeout, metadata=metadata)

    def list_games(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        status_filter: "pb.StatusFilter" = pb.STATUS_FILTER_UNSPECIFIED,
        tenant: str = "",
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.ListGamesResponse:
        """ListGames: one page of games in game-id order (BASIC view), of the caller's
        tenant; an admin token of no tenant lists every tenant's, or `tenant`'s."""
        req = pb.ListGamesRequest(
            page_size=page_size,
            page_token=page_token,
            status_filter=status_filter,
            tenant=tenant,
        )
        return self.call(self.stub.ListGames, req, timeout=timeout, metadata=metadata)

    def iter_games(
        self,
        *,
        page_size: int = 0,
        status_filter: "pb.StatusFilter" = pb.STATUS_FILTER_UNSPECIFIED,
        tenant: str = "",
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> Iterator[pb.Game]:
        """Every game, page after page (ListGames with each next_page_token)."""
        token = ""
        while True:
            page = self.list_games(
                page_size=page_size,
                page_token=token,
                status_filter=status_filter,
                tenant=tenant,
                timeout=timeout,
                metadata=metadata,
            )
            yield from page.games
            token = page.next_page_token
            if not token:
                return

    def delete_game(
        self,
        game_id: str,
        *,
        expected_version: Optional[int] = None,
        allow_missing: bool = False,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> pb.DeleteGameResponse:
        """DeleteGame: removes the game and its history. Safe to retry with allow_missing."""
        req = pb.DeleteGameRequest(game_id=game_id, allow_missing=allow_missing)
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call(self.stub.DeleteGame, req, timeout=timeout, metadata=metadata)

    # ------------------------------------------------------------------------ watching

    def watch_game(
        self,
        game_id: str,
        *,
        from_version: int = 0,
        timeout: Optional[float] = None,
        metadata: Optional[Metadata] = None,
    ) -> "WatchStream":
        """WatchGame, one stream, no reconnection (see `follow` for that). Iterating it
        yields WatchGameResponse messages and raises the typed error; `cancel()` ends it.
        No deadline unless `timeout` is given."""
        req = pb.WatchGameRequest(game_id=game_id, from_version=from_version)
        call = self.stub.WatchGame(req, timeout=timeout, metadata=self._md(metadata))
        return WatchStream(call)

    def follow(
        self,
        game_id: str,
        *,
        from_version: int = 0,
        stop_when_over: bool = False,
        backoff_initial: float = 0.1,
        backoff_max: float = 5.0,
        max_attempts: Optional[int] = 20,
    ) -> "GameFollower":
        """A GameFollower of `game_id`: every event once, in version order, across
        dropped streams, server restarts and resyncs (see GameFollower)."""
        from ._follower import GameFollower

        return GameFollower(
            self,
            game_id,
            from_version=from_version,
            stop_when_over=stop_when_over,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
            max_attempts=max_attempts,
        )


class WatchStream:
    """One WatchGame stream: an iterator of WatchGameResponse that raises typed errors."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __iter__(self) -> "WatchStream":
        return self

    def __next__(self) -> pb.WatchGameResponse:
        try:
            return next(self._call)
        except grpc.RpcError as e:
            raise _errors.from_rpc_error(e) from None

    def cancel(self) -> None:
        """Ends the stream (the iterator then raises CancelledError)."""
        self._call.cancel()

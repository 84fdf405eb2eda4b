from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GameView(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_VIEW_UNSPECIFIED: _ClassVar[GameView]
    GAME_VIEW_BASIC: _ClassVar[GameView]
    GAME_VIEW_FULL: _ClassVar[GameView]

class Variant(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VARIANT_UNSPECIFIED: _ClassVar[Variant]
    VARIANT_STANDARD: _ClassVar[Variant]
    VARIANT_CHESS960: _ClassVar[Variant]
    VARIANT_CRAZYHOUSE: _ClassVar[Variant]
    VARIANT_ATOMIC: _ClassVar[Variant]
    VARIANT_ANTICHESS: _ClassVar[Variant]
    VARIANT_HORDE: _ClassVar[Variant]
    VARIANT_RACING_KINGS: _ClassVar[Variant]
    VARIANT_KING_OF_THE_HILL: _ClassVar[Variant]
    VARIANT_THREE_CHECK: _ClassVar[Variant]

class Color(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOR_UNSPECIFIED: _ClassVar[Color]
    COLOR_WHITE: _ClassVar[Color]
    COLOR_BLACK: _ClassVar[Color]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_IN_PROGRESS: _ClassVar[GameStatus]
    GAME_STATUS_CHECKMATE: _ClassVar[GameStatus]
    GAME_STATUS_STALEMATE: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_INSUFFICIENT_MATERIAL: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_FIVEFOLD_REPETITION: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_SEVENTY_FIVE_MOVES: _ClassVar[GameStatus]
    GAME_STATUS_RESIGNATION: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_AGREEMENT: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_CLAIMED_THREEFOLD: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_CLAIMED_FIFTY_MOVES: _ClassVar[GameStatus]
    GAME_STATUS_OUT_OF_TIME: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_TIMEOUT_INSUFFICIENT_MATERIAL: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_DEAD_POSITION: _ClassVar[GameStatus]
    GAME_STATUS_DRAW_TIMEOUT_UNWINNABLE: _ClassVar[GameStatus]
    GAME_STATUS_VARIANT_WIN: _ClassVar[GameStatus]
    GAME_STATUS_VARIANT_DRAW: _ClassVar[GameStatus]

class ClockStart(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLOCK_START_UNSPECIFIED: _ClassVar[ClockStart]
    CLOCK_START_ON_CREATE: _ClassVar[ClockStart]
    CLOCK_START_AFTER_FIRST_MOVES: _ClassVar[ClockStart]

class WinnabilityVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WINNABILITY_VERDICT_UNSPECIFIED: _ClassVar[WinnabilityVerdict]
    WINNABILITY_VERDICT_WINNABLE: _ClassVar[WinnabilityVerdict]
    WINNABILITY_VERDICT_UNWINNABLE: _ClassVar[WinnabilityVerdict]
    WINNABILITY_VERDICT_UNDETERMINED: _ClassVar[WinnabilityVerdict]

class StatusFilter(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_FILTER_UNSPECIFIED: _ClassVar[StatusFilter]
    STATUS_FILTER_ALL: _ClassVar[StatusFilter]
    STATUS_FILTER_IN_PROGRESS: _ClassVar[StatusFilter]
    STATUS_FILTER_ENDED: _ClassVar[StatusFilter]
GAME_VIEW_UNSPECIFIED: GameView
GAME_VIEW_BASIC: GameView
GAME_VIEW_FULL: GameView
VARIANT_UNSPECIFIED: Variant
VARIANT_STANDARD: Variant
VARIANT_CHESS960: Variant
VARIANT_CRAZYHOUSE: Variant
VARIANT_ATOMIC: Variant
VARIANT_ANTICHESS: Variant
VARIANT_HORDE: Variant
VARIANT_RACING_KINGS: Variant
VARIANT_KING_OF_THE_HILL: Variant
VARIANT_THREE_CHECK: Variant
COLOR_UNSPECIFIED: Color
COLOR_WHITE: Color
COLOR_BLACK: Color
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_IN_PROGRESS: GameStatus
GAME_STATUS_CHECKMATE: GameStatus
GAME_STATUS_STALEMATE: GameStatus
GAME_STATUS_DRAW_INSUFFICIENT_MATERIAL: GameStatus
GAME_STATUS_DRAW_FIVEFOLD_REPETITION: GameStatus
GAME_STATUS_DRAW_SEVENTY_FIVE_MOVES: GameStatus
GAME_STATUS_RESIGNATION: GameStatus
GAME_STATUS_DRAW_AGREEMENT: GameStatus
GAME_STATUS_DRAW_CLAIMED_THREEFOLD: GameStatus
GAME_STATUS_DRAW_CLAIMED_FIFTY_MOVES: GameStatus
GAME_STATUS_OUT_OF_TIME: GameStatus
GAME_STATUS_DRAW_TIMEOUT_INSUFFICIENT_MATERIAL: GameStatus
GAME_STATUS_DRAW_DEAD_POSITION: GameStatus
GAME_STATUS_DRAW_TIMEOUT_UNWINNABLE: GameStatus
GAME_STATUS_VARIANT_WIN: GameStatus
GAME_STATUS_VARIANT_DRAW: GameStatus
CLOCK_START_UNSPECIFIED: ClockStart
CLOCK_START_ON_CREATE: ClockStart
CLOCK_START_AFTER_FIRST_MOVES: ClockStart
WINNABILITY_VERDICT_UNSPECIFIED: WinnabilityVerdict
WINNABILITY_VERDICT_WINNABLE: WinnabilityVerdict
WINNABILITY_VERDICT_UNWINNABLE: WinnabilityVerdict
WINNABILITY_VERDICT_UNDETERMINED: WinnabilityVerdict
STATUS_FILTER_UNSPECIFIED: StatusFilter
STATUS_FILTER_ALL: StatusFilter
STATUS_FILTER_IN_PROGRESS: StatusFilter
STATUS_FILTER_ENDED: StatusFilter

class TimeControl(_message.Message):
    __slots__ = ("initial_ms", "increment_ms", "clock_start")
    INITIAL_MS_FIELD_NUMBER: _ClassVar[int]
    INCREMENT_MS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_START_FIELD_NUMBER: _ClassVar[int]
    initial_ms: int
    increment_ms: int
    clock_start: ClockStart
    def __init__(self, initial_ms: _Optional[int] = ..., increment_ms: _Optional[int] = ..., clock_start: _Optional[_Union[ClockStart, str]] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("time_control", "white_remaining_ms", "black_remaining_ms", "running", "as_of_unix_ms")
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    WHITE_REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    BLACK_REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    AS_OF_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    time_control: TimeControl
    white_remaining_ms: int
    black_remaining_ms: int
    running: Color
    as_of_unix_ms: int
    def __init__(self, time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., white_remaining_ms: _Optional[int] = ..., black_remaining_ms: _Optional[int] = ..., running: _Optional[_Union[Color, str]] = ..., as_of_unix_ms: _Optional[int] = ...) -> None: ...

class Game(_message.Message):
    __slots__ = ("game_id", "variant", "initial_fen", "fen", "moves", "san_moves", "ply", "side_to_move", "in_check", "status", "winner", "can_claim_threefold", "can_claim_fifty_moves", "pgn", "chess960_position", "clock", "draw_offered_by", "version", "opening", "tags", "tenant")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    INITIAL_FEN_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    MOVES_FIELD_NUMBER: _ClassVar[int]
    SAN_MOVES_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    SIDE_TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    IN_CHECK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    CAN_CLAIM_THREEFOLD_FIELD_NUMBER: _ClassVar[int]
    CAN_CLAIM_FIFTY_MOVES_FIELD_NUMBER: _ClassVar[int]
    PGN_FIELD_NUMBER: _ClassVar[int]
    CHESS960_POSITION_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    DRAW_OFFERED_BY_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    OPENING_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    variant: Variant
    initial_fen: str
    fen: str
    moves: _containers.RepeatedScalarFieldContainer[str]
    san_moves: _containers.RepeatedScalarFieldContainer[str]
    ply: int
    side_to_move: Color
    in_check: bool
    status: GameStatus
    winner: Color
    can_claim_threefold: bool
    can_claim_fifty_moves: bool
    pgn: str
    chess960_position: int
    clock: Clock
    draw_offered_by: Color
    version: int
    opening: Opening
    tags: _containers.ScalarMap[str, str]
    tenant: str
    def __init__(self, game_id: _Optional[str] = ..., variant: _Optional[_Union[Variant, str]] = ..., initial_fen: _Optional[str] = ..., fen: _Optional[str] = ..., moves: _Optional[_Iterable[str]] = ..., san_moves: _Optional[_Iterable[str]] = ..., ply: _Optional[int] = ..., side_to_move: _Optional[_Union[Color, str]] = ..., in_check: bool = ..., status: _Optional[_Union[GameStatus, str]] = ..., winner: _Optional[_Union[Color, str]] = ..., can_claim_threefold: bool = ..., can_claim_fifty_moves: bool = ..., pgn: _Optional[str] = ..., chess960_position: _Optional[int] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ..., draw_offered_by: _Optional[_Union[Color, str]] = ..., version: _Optional[int] = ..., opening: _Optional[_Union[Opening, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ..., tenant: _Optional[str] = ...) -> None: ...

class Opening(_message.Message):
    __slots__ = ("eco", "name", "ply")
    ECO_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    eco: str
    name: str
    ply: int
    def __init__(self, eco: _Optional[str] = ..., name: _Optional[str] = ..., ply: _Optional[int] = ...) -> None: ...

class Move(_message.Message):
    __slots__ = ("uci", "san", "from_square", "to_square", "promotion", "capture", "check", "checkmate", "castle", "en_passant", "drop")
    UCI_FIELD_NUMBER: _ClassVar[int]
    SAN_FIELD_NUMBER: _ClassVar[int]
    FROM_SQUARE_FIELD_NUMBER: _ClassVar[int]
    TO_SQUARE_FIELD_NUMBER: _ClassVar[int]
    PROMOTION_FIELD_NUMBER: _ClassVar[int]
    CAPTURE_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    CHECKMATE_FIELD_NUMBER: _ClassVar[int]
    CASTLE_FIELD_NUMBER: _ClassVar[int]
    EN_PASSANT_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    uci: str
    san: str
    from_square: str
    to_square: str
    promotion: str
    capture: bool
    check: bool
    checkmate: bool
    castle: bool
    en_passant: bool
    drop: str
    def __init__(self, uci: _Optional[str] = ..., san: _Optional[str] = ..., from_square: _Optional[str] = ..., to_square: _Optional[str] = ..., promotion: _Optional[str] = ..., capture: bool = ..., check: bool = ..., checkmate: bool = ..., castle: bool = ..., en_passant: bool = ..., drop: _Optional[str] = ...) -> None: ...

class NewGameRequest(_message.Message):
    __slots__ = ("fen", "variant", "chess960_position", "game_id", "time_control", "tags", "view")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    FEN_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    CHESS960_POSITION_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    fen: str
    variant: Variant
    chess960_position: int
    game_id: str
    time_control: TimeControl
    tags: _containers.ScalarMap[str, str]
    view: GameView
    def __init__(self, fen: _Optional[str] = ..., variant: _Optional[_Union[Variant, str]] = ..., chess960_position: _Optional[int] = ..., game_id: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class NewGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class GetGameRequest(_message.Message):
    __slots__ = ("game_id", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class GetGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("game_id", "move", "expected_ply", "color", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_PLY_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    move: str
    expected_ply: int
    color: Color
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., move: _Optional[str] = ..., expected_ply: _Optional[int] = ..., color: _Optional[_Union[Color, str]] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("game", "move")
    GAME_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    game: Game
    move: Move
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ..., move: _Optional[_Union[Move, _Mapping]] = ...) -> None: ...

class UndoRequest(_message.Message):
    __slots__ = ("game_id", "expected_ply", "color", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_PLY_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    expected_ply: int
    color: Color
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., expected_ply: _Optional[int] = ..., color: _Optional[_Union[Color, str]] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class UndoResponse(_message.Message):
    __slots__ = ("game", "undone")
    GAME_FIELD_NUMBER: _ClassVar[int]
    UNDONE_FIELD_NUMBER: _ClassVar[int]
    game: Game
    undone: Move
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ..., undone: _Optional[_Union[Move, _Mapping]] = ...) -> None: ...

class LegalMovesRequest(_message.Message):
    __slots__ = ("game_id", "fen", "variant")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    fen: str
    variant: Variant
    def __init__(self, game_id: _Optional[str] = ..., fen: _Optional[str] = ..., variant: _Optional[_Union[Variant, str]] = ...) -> None: ...

class LegalMovesResponse(_message.Message):
    __slots__ = ("moves", "status", "in_check", "fen", "ply", "winner", "version")
    MOVES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    IN_CHECK_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    PLY_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    moves: _containers.RepeatedCompositeFieldContainer[Move]
    status: GameStatus
    in_check: bool
    fen: str
    ply: int
    winner: Color
    version: int
    def __init__(self, moves: _Optional[_Iterable[_Union[Move, _Mapping]]] = ..., status: _Optional[_Union[GameStatus, str]] = ..., in_check: bool = ..., fen: _Optional[str] = ..., ply: _Optional[int] = ..., winner: _Optional[_Union[Color, str]] = ..., version: _Optional[int] = ...) -> None: ...

class PerftRequest(_message.Message):
    __slots__ = ("fen", "variant", "depth", "divide", "threads")
    FEN_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    DIVIDE_FIELD_NUMBER: _ClassVar[int]
    THREADS_FIELD_NUMBER: _ClassVar[int]
    fen: str
    variant: Variant
    depth: int
    divide: bool
    threads: int
    def __init__(self, fen: _Optional[str] = ..., variant: _Optional[_Union[Variant, str]] = ..., depth: _Optional[int] = ..., divide: bool = ..., threads: _Optional[int] = ...) -> None: ...

class PerftDivide(_message.Message):
    __slots__ = ("move", "nodes")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    move: str
    nodes: int
    def __init__(self, move: _Optional[str] = ..., nodes: _Optional[int] = ...) -> None: ...

class PerftResponse(_message.Message):
    __slots__ = ("nodes", "divide")
    NODES_FIELD_NUMBER: _ClassVar[int]
    DIVIDE_FIELD_NUMBER: _ClassVar[int]
    nodes: int
    divide: _containers.RepeatedCompositeFieldContainer[PerftDivide]
    def __init__(self, nodes: _Optional[int] = ..., divide: _Optional[_Iterable[_Union[PerftDivide, _Mapping]]] = ...) -> None: ...

class WinnabilityRequest(_message.Message):
    __slots__ = ("game_id", "fen", "variant")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    fen: str
    variant: Variant
    def __init__(self, game_id: _Optional[str] = ..., fen: _Optional[str] = ..., variant: _Optional[_Union[Variant, str]] = ...) -> None: ...

class WinnabilityResponse(_message.Message):
    __slots__ = ("white", "black", "dead")
    WHITE_FIELD_NUMBER: _ClassVar[int]
    BLACK_FIELD_NUMBER: _ClassVar[int]
    DEAD_FIELD_NUMBER: _ClassVar[int]
    white: SideWinnability
    black: SideWinnability
    dead: bool
    def __init__(self, white: _Optional[_Union[SideWinnability, _Mapping]] = ..., black: _Optional[_Union[SideWinnability, _Mapping]] = ..., dead: bool = ...) -> None: ...

class SideWinnability(_message.Message):
    __slots__ = ("verdict", "helpmate", "nodes")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    HELPMATE_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    verdict: WinnabilityVerdict
    helpmate: _containers.RepeatedScalarFieldContainer[str]
    nodes: int
    def __init__(self, verdict: _Optional[_Union[WinnabilityVerdict, str]] = ..., helpmate: _Optional[_Iterable[str]] = ..., nodes: _Optional[int] = ...) -> None: ...

class ResignRequest(_message.Message):
    __slots__ = ("game_id", "color", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    color: Color
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., color: _Optional[_Union[Color, str]] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class ResignResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class OfferDrawRequest(_message.Message):
    __slots__ = ("game_id", "color", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    color: Color
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., color: _Optional[_Union[Color, str]] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class OfferDrawResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class RespondToDrawRequest(_message.Message):
    __slots__ = ("game_id", "color", "accept", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    color: Color
    accept: bool
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., color: _Optional[_Union[Color, str]] = ..., accept: bool = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class RespondToDrawResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class ClaimDrawRequest(_message.Message):
    __slots__ = ("game_id", "color", "move", "expected_ply", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_PLY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    color: Color
    move: str
    expected_ply: int
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., color: _Optional[_Union[Color, str]] = ..., move: _Optional[str] = ..., expected_ply: _Optional[int] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class ClaimDrawResponse(_message.Message):
    __slots__ = ("game", "move")
    GAME_FIELD_NUMBER: _ClassVar[int]
    MOVE_FIELD_NUMBER: _ClassVar[int]
    game: Game
    move: Move
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ..., move: _Optional[_Union[Move, _Mapping]] = ...) -> None: ...

class AddTimeRequest(_message.Message):
    __slots__ = ("game_id", "color", "ms", "expected_version", "view")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    MS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    color: Color
    ms: int
    expected_version: int
    view: GameView
    def __init__(self, game_id: _Optional[str] = ..., color: _Optional[_Union[Color, str]] = ..., ms: _Optional[int] = ..., expected_version: _Optional[int] = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class AddTimeResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class WatchGameRequest(_message.Message):
    __slots__ = ("game_id", "from_version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    from_version: int
    def __init__(self, game_id: _Optional[str] = ..., from_version: _Optional[int] = ...) -> None: ...

class WatchGameResponse(_message.Message):
    __slots__ = ("event", "resync")
    EVENT_FIELD_NUMBER: _ClassVar[int]
    RESYNC_FIELD_NUMBER: _ClassVar[int]
    event: GameEvent
    resync: Resync
    def __init__(self, event: _Optional[_Union[GameEvent, _Mapping]] = ..., resync: _Optional[_Union[Resync, _Mapping]] = ...) -> None: ...

class Resync(_message.Message):
    __slots__ = ("resume_from_version",)
    RESUME_FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    resume_from_version: int
    def __init__(self, resume_from_version: _Optional[int] = ...) -> None: ...

class GameEvent(_message.Message):
    __slots__ = ("game_id", "version", "at_unix_ms", "started", "move_played", "move_undone", "draw_offered", "draw_declined", "game_ended", "time_added", "state")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AT_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    MOVE_PLAYED_FIELD_NUMBER: _ClassVar[int]
    MOVE_UNDONE_FIELD_NUMBER: _ClassVar[int]
    DRAW_OFFERED_FIELD_NUMBER: _ClassVar[int]
    DRAW_DECLINED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    TIME_ADDED_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    version: int
    at_unix_ms: int
    started: GameStarted
    move_played: MovePlayed
    move_undone: MoveUndone
    draw_offered: DrawOffered
    draw_declined: DrawDeclined
    game_ended: GameEnded
    time_added: TimeAdded
    state: GameSnapshot
    def __init__(self, game_id: _Optional[str] = ..., version: _Optional[int] = ..., at_unix_ms: _Optional[int] = ..., started: _Optional[_Union[GameStarted, _Mapping]] = ..., move_played: _Optional[_Union[MovePlayed, _Mapping]] = ..., move_undone: _Optional[_Union[MoveUndone, _Mapping]] = ..., draw_offered: _Optional[_Union[DrawOffered, _Mapping]] = ..., draw_declined: _Optional[_Union[DrawDeclined, _Mapping]] = ..., game_ended: _Optional[_Union[GameEnded, _Mapping]] = ..., time_added: _Optional[_Union[TimeAdded, _Mapping]] = ..., state: _Optional[_Union[GameSnapshot, _Mapping]] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("variant", "initial_fen", "chess960_position", "time_control")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    INITIAL_FEN_FIELD_NUMBER: _ClassVar[int]
    CHESS960_POSITION_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    variant: Variant
    initial_fen: str
    chess960_position: int
    time_control: TimeControl
    def __init__(self, variant: _Optional[_Union[Variant, str]] = ..., initial_fen: _Optional[str] = ..., chess960_position: _Optional[int] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class MovePlayed(_message.Message):
    __slots__ = ("move", "color")
    MOVE_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    move: Move
    color: Color
    def __init__(self, move: _Optional[_Union[Move, _Mapping]] = ..., color: _Optional[_Union[Color, str]] = ...) -> None: ...

class MoveUndone(_message.Message):
    __slots__ = ("undone", "color")
    UNDONE_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    undone: Move
    color: Color
    def __init__(self, undone: _Optional[_Union[Move, _Mapping]] = ..., color: _Optional[_Union[Color, str]] = ...) -> None: ...

class DrawOffered(_message.Message):
    __slots__ = ("color",)
    COLOR_FIELD_NUMBER: _ClassVar[int]
    color: Color
    def __init__(self, color: _Optional[_Union[Color, str]] = ...) -> None: ...

class DrawDeclined(_message.Message):
    __slots__ = ("color", "lapsed")
    COLOR_FIELD_NUMBER: _ClassVar[int]
    LAPSED_FIELD_NUMBER: _ClassVar[int]
    color: Color
    lapsed: bool
    def __init__(self, color: _Optional[_Union[Color, str]] = ..., lapsed: bool = ...) -> None: ...

class TimeAdded(_message.Message):
    __slots__ = ("color", "ms")
    COLOR_FIELD_NUMBER: _ClassVar[int]
    MS_FIELD_NUMBER: _ClassVar[int]
    color: Color
    ms: int
    def __init__(self, color: _Optional[_Union[Color, str]] = ..., ms: _Optional[int] = ...) -> None: ...

class GameEnded(_message.Message):
    __slots__ = ("status", "winner", "color")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    status: GameStatus
    winner: Color
    color: Color
    def __init__(self, status: _Optional[_Union[GameStatus, str]] = ..., winner: _Optional[_Union[Color, str]] = ..., color: _Optional[_Union[Color, str]] = ...) -> None: ...

class GameSnapshot(_message.Message):
    __slots__ = ("ply", "fen", "side_to_move", "in_check", "status", "winner", "clock", "draw_offered_by")
    PLY_FIELD_NUMBER: _ClassVar[int]
    FEN_FIELD_NUMBER: _ClassVar[int]
    SIDE_TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    IN_CHECK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    DRAW_OFFERED_BY_FIELD_NUMBER: _ClassVar[int]
    ply: int
    fen: str
    side_to_move: Color
    in_check: bool
    status: GameStatus
    winner: Color
    clock: Clock
    draw_offered_by: Color
    def __init__(self, ply: _Optional[int] = ..., fen: _Optional[str] = ..., side_to_move: _Optional[_Union[Color, str]] = ..., in_check: bool = ..., status: _Optional[_Union[GameStatus, str]] = ..., winner: _Optional[_Union[Color, str]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ..., draw_offered_by: _Optional[_Union[Color, str]] = ...) -> None: ...

class ImportGameRequest(_message.Message):
    __slots__ = ("pgn", "game_id", "validate_only", "view")
    PGN_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VALIDATE_ONLY_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    pgn: str
    game_id: str
    validate_only: bool
    view: GameView
    def __init__(self, pgn: _Optional[str] = ..., game_id: _Optional[str] = ..., validate_only: bool = ..., view: _Optional[_Union[GameView, str]] = ...) -> None: ...

class ImportGameResponse(_message.Message):
    __slots__ = ("game",)
    GAME_FIELD_NUMBER: _ClassVar[int]
    game: Game
    def __init__(self, game: _Optional[_Union[Game, _Mapping]] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "status_filter", "tenant")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATUS_FILTER_FIELD_NUMBER: _ClassVar[int]
    TENANT_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    status_filter: StatusFilter
    tenant: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., status_filter: _Optional[_Union[StatusFilter, str]] = ..., tenant: _Optional[str] = ...) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games", "next_page_token")
    GAMES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[Game]
    next_page_token: str
    def __init__(self, games: _Optional[_Iterable[_Union[Game, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteGameRequest(_message.Message):
    __slots__ = ("game_id", "expected_version", "allow_missing")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ALLOW_MISSING_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    expected_version: int
    allow_missing: bool
    def __init__(self, game_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., allow_missing: bool = ...) -> None: ...

class DeleteGameResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

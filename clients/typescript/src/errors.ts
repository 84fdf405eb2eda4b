// Typed errors: every failed call of a ChessClient throws a ChessError carrying the gRPC
// code, the ErrorReason of the status's google.rpc.ErrorInfo, its metadata, the retry
// delay of a google.rpc.RetryInfo and the google.rpc.ResourceInfo, when sent. Each detail
// is found by its type (ConnectError.findDetails with the generated schema), never by its
// position: the server orders them differently from one error to another.
import { Code, ConnectError } from "@connectrpc/connect";
import type { DescMessage, MessageShape } from "@bufbuild/protobuf";
import { ErrorReason, ErrorReasonSchema } from "./gen/chess/v1/error_reason_pb.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  ResourceInfoSchema,
  RetryInfoSchema,
} from "./gen/google/rpc/error_details_pb.js";
import type { BadRequest, ErrorInfo, ResourceInfo } from "./gen/google/rpc/error_details_pb.js";

/** The ErrorInfo domain of this service's own errors. */
export const ERROR_DOMAIN = "chess.v1";

/** A failed call of chess.v1.ChessService. */
export class ChessError extends Error {
  override readonly name = "ChessError";
  /** The gRPC status code (Connect's `Code`, whose numbers are gRPC's). */
  readonly code: Code;
  /**
   * The ErrorReason named by the ErrorInfo; ERROR_REASON_UNSPECIFIED when the status has
   * no ErrorInfo or names a reason this client does not know yet (`reasonName` keeps it):
   * handle those by `code`.
   */
  readonly reason: ErrorReason;
  /** The raw ErrorInfo reason string ("" without an ErrorInfo). */
  readonly reasonName: string;
  /** The ErrorInfo domain ("chess.v1" for this service's errors; "" without one). */
  readonly domain: string;
  /** The ErrorInfo metadata (`game_id`, `current_version`, ...). */
  readonly metadata: Readonly<Record<string, string>>;
  /** When to retry, in milliseconds, from a google.rpc.RetryInfo (RATE_LIMITED sends one). */
  readonly retryDelayMs: number | undefined;
  /** The google.rpc.ResourceInfo, when sent (with GAME_NOT_FOUND: the game asked for). */
  readonly resourceInfo: ResourceInfo | undefined;
  /** The google.rpc.BadRequest, when sent: the malformed fields. */
  readonly badRequest: BadRequest | undefined;
  /** The status message, meant for a person, without the code and reason. */
  readonly rawMessage: string;
  /** The ConnectError this was made from (its `metadata` holds the response's trailers). */
  override readonly cause: ConnectError;

  constructor(cause: ConnectError) {
    const info = pickErrorInfo(cause.findDetails(ErrorInfoSchema));
    const reasonName = info?.reason ?? "";
    const codeName = Code[cause.code] ?? String(cause.code);
    super(`${codeName}${reasonName ? ` ${reasonName}` : ""}: ${cause.rawMessage}`);
    this.cause = cause;
    this.code = cause.code;
    this.rawMessage = cause.rawMessage;
    this.reasonName = reasonName;
    this.reason = reasonFromName(reasonName);
    this.domain = info?.domain ?? "";
    this.metadata = Object.freeze({ ...(info?.metadata ?? {}) });
    const retry = cause.findDetails(RetryInfoSchema)[0];
    this.retryDelayMs =
      retry?.retryDelay !== undefined
        ? Number(retry.retryDelay.seconds) * 1000 + Math.round(retry.retryDelay.nanos / 1e6)
        : undefined;
    this.resourceInfo = cause.findDetails(ResourceInfoSchema)[0];
    this.badRequest = cause.findDetails(BadRequestSchema)[0];
  }

  /** Every status detail of one type (any google.rpc detail schema, for example). */
  details<Desc extends DescMessage>(schema: Desc): MessageShape<Desc>[] {
    return this.cause.findDetails(schema);
  }

  /** The ChessError for anything a call threw (a ConnectError, an abort, a network error). */
  static from(error: unknown): ChessError {
    if (error instanceof ChessError) return error;
    return new ChessError(ConnectError.from(error));
  }
}

/** The chess.v1 ErrorInfo when there is one, else the first ErrorInfo. */
function pickErrorInfo(infos: ErrorInfo[]): ErrorInfo | undefined {
  return infos.find((i) => i.domain === ERROR_DOMAIN) ?? infos[0];
}

/** The ErrorReason whose proto name is `name`; ERROR_REASON_UNSPECIFIED for any other. */
export function reasonFromName(name: string): ErrorReason {
  const value = ErrorReasonSchema.values.find((v) => v.name === name);
  return value === undefined ? ErrorReason.ERROR_REASON_UNSPECIFIED : (value.number as ErrorReason);
}

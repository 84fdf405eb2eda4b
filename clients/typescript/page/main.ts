// The game page the server serves at `/` of its gRPC-Web listener (src/server/page.rs):
// a list of games (ListGames) and one game (`/?game=ID`): its board, clocks, moves in SAN,
// status, opening and event log, followed live (WatchGame through follow()), with the
// history stepped through by buttons and arrow keys. It calls the API on its own origin;
// a token the person types in is kept in sessionStorage and sent as a bearer token.
import { ChessError, Code, Color, GameStatus, GameView, StatusFilter, Variant, createChessClient } from "../src/index.js";
import type { ChessClient, Clock, Game, GameEvent, GameSnapshot } from "../src/index.js";
import { drawBoard, uciSquares } from "./board.js";

const TOKEN_KEY = "chess-service-token";

/** One position of the game's history: index = ply. */
interface Position {
  fen: string;
  inCheck: boolean;
  san?: string;
  uci?: string;
  /** The clocks right after the move (timed games). */
  clock?: Clock;
}

const $ = <T extends HTMLElement>(id: string): T => {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`the page has no #${id}`);
  return node as T;
};

// ------------------------------------------------------------------------------ state
let client: ChessClient = makeClient();
const gameId = new URLSearchParams(location.search).get("game") ?? "";
let game: Game | undefined; // the last GetGame answer (opening, tags, variant)
let latest: GameSnapshot | undefined; // the game after its last event
let positions: Position[] = [];
let events: GameEvent[] = [];
let viewPly = -1; // -1: follow the last ply
let flipped = false;
let clockOffsetMs = 0; // browser time minus server time, from the last GetGame
let follower: AbortController | undefined;
let liveState = "";
let listToken = "";
let boardDrawn = false;
const listRows = new Map<string, HTMLTableRowElement>(); // the list's rows by game id

function makeClient(): ChessClient {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  return createChessClient({ baseUrl: location.origin, token: token || undefined, timeoutMs: 10_000 });
}

// ------------------------------------------------------------------------------ text
const STATUS_TEXT: Record<number, string> = {
  [GameStatus.IN_PROGRESS]: "in progress",
  [GameStatus.CHECKMATE]: "checkmate",
  [GameStatus.STALEMATE]: "stalemate",
  [GameStatus.DRAW_INSUFFICIENT_MATERIAL]: "draw: insufficient material",
  [GameStatus.DRAW_FIVEFOLD_REPETITION]: "draw: fivefold repetition",
  [GameStatus.DRAW_SEVENTY_FIVE_MOVES]: "draw: 75-move rule",
  [GameStatus.RESIGNATION]: "resignation",
  [GameStatus.DRAW_AGREEMENT]: "draw by agreement",
  [GameStatus.DRAW_CLAIMED_THREEFOLD]: "draw claimed: threefold repetition",
  [GameStatus.DRAW_CLAIMED_FIFTY_MOVES]: "draw claimed: fifty-move rule",
  [GameStatus.OUT_OF_TIME]: "out of time",
  [GameStatus.DRAW_TIMEOUT_INSUFFICIENT_MATERIAL]: "draw: flag fell, no mating material",
  [GameStatus.DRAW_DEAD_POSITION]: "draw: dead position",
  [GameStatus.DRAW_TIMEOUT_UNWINNABLE]: "draw: flag fell, opponent could not win",
  [GameStatus.VARIANT_WIN]: "variant win",
  [GameStatus.VARIANT_DRAW]: "variant draw",
};

const colorName = (c: Color) => (c === Color.WHITE ? "white" : c === Color.BLACK ? "black" : "");

function statusText(status: GameStatus, winner: Color, toMove: Color): string {
  const what = STATUS_TEXT[status] ?? `status ${status}`;
  if (status === GameStatus.IN_PROGRESS) return `${what}, ${colorName(toMove)} to move`;
  const result = winner === Color.WHITE ? "1-0" : winner === Color.BLACK ? "0-1" : "½-½";
  return winner === Color.UNSPECIFIED ? `${what} (${result})` : `${what}: ${colorName(winner)} wins (${result})`;
}

/** The status in a few words, for the list of games. */
function shortStatus(status: GameStatus, winner: Color, toMove: Color): string {
  if (status === GameStatus.IN_PROGRESS) return `${colorName(toMove)} to move`;
  const result = winner === Color.WHITE ? "1-0" : winner === Color.BLACK ? "0-1" : "½-½";
  return `${result} ${STATUS_TEXT[status] ?? ""}`;
}

function clockText(ms: number): string {
  const clamped = Math.max(0, ms);
  const h = Math.floor(clamped / 3_600_000);
  const m = Math.floor((clamped % 3_600_000) / 60_000);
  const s = Math.floor((clamped % 60_000) / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (clamped < 10_000) return `${s}.${Math.floor((clamped % 1000) / 100)}`;
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

function timeText(unixMs: bigint): string {
  if (unixMs === 0n) return "";
  const d = new Date(Number(unixMs));
  return `${d.toISOString().slice(11, 23)}Z`;
}

function eventText(e: GameEvent): string {
  const k = e.kind;
  switch (k.case) {
    case "started":
      return `game created (${Variant[k.value.variant] ?? "standard"}${
        k.value.timeControl ? `, ${Number(k.value.timeControl.initialMs) / 1000}+${Number(k.value.timeControl.incrementMs) / 1000}` : ""
      })`;
    case "movePlayed":
      return `${colorName(k.value.color)} played ${k.value.move?.san ?? ""} (${k.value.move?.uci ?? ""})`;
    case "moveUndone":
      return `${colorName(k.value.color)}'s ${k.value.undone?.san ?? ""} taken back`;
    case "drawOffered":
      return `${colorName(k.value.color)} offered a draw`;
    case "drawDeclined":
      return k.value.lapsed ? `draw offer lapsed (${colorName(k.value.color)} moved)` : `${colorName(k.value.color)} declined the draw`;
    case "gameEnded":
      return `game ended: ${statusText(k.value.status, k.value.winner, Color.UNSPECIFIED)} (by ${colorName(k.value.color)})`;
    case "timeAdded":
      return `${Number(k.value.ms) / 1000}s added to ${colorName(k.value.color)}'s clock`;
    default:
      return "event";
  }
}

function errorText(e: unknown): string {
  const err = ChessError.from(e);
  if (err.code === Code.Unauthenticated) return "The server needs a token: enter it above.";
  if (err.code === Code.PermissionDenied) return `This token may not do that: ${err.rawMessage}`;
  return err.message;
}

function say(text: string) {
  $("message").textContent = text;
  if (/token/.test(text)) $<HTMLInputElement>("token").focus();
}

// ------------------------------------------------------------------------------ games list
async function loadList(more = false) {
  const filter = Number($<HTMLSelectElement>("filter").value) as StatusFilter;
  try {
    const answer = await client.listGames({ pageSize: 100, statusFilter: filter, pageToken: more ? listToken : "" });
    listToken = answer.nextPageToken;
    const body = $("games").querySelector("tbody");
    if (body === null) return;
    if (!more) {
      body.replaceChildren();
      listRows.clear();
    }
    for (const g of answer.games) {
      const row = document.createElement("tr");
      if (g.gameId === gameId) row.className = "current";
      const link = document.createElement("a");
      link.href = `?game=${encodeURIComponent(g.gameId)}`;
      link.textContent = g.tenant ? `${g.tenant}/${g.gameId}` : g.gameId;
      const cells = [link, String(g.ply), shortStatus(g.status, g.winner, g.sideToMove)];
      if (!g.tenant) listRows.set(g.gameId, row);
      for (const c of cells) {
        const td = document.createElement("td");
        td.append(c);
        row.append(td);
      }
      body.append(row);
    }
    $("more").hidden = listToken === "";
    $("list-count").textContent = `${body.children.length} game${body.children.length === 1 ? "" : "s"}${listToken ? "+" : ""}`;
  } catch (e) {
    say(`Listing games failed: ${errorText(e)}`);
  }
}

// ------------------------------------------------------------------------------ one game
async function openGame() {
  $("hint").hidden = gameId !== "";
  if (!gameId) return;
  $("game-pane").hidden = false;
  $("game-id").textContent = gameId;
  document.title = `${gameId} · chess-service`;
  follower?.abort();
  try {
    const sent = Date.now();
    const answer = (await client.getGame({ gameId, view: GameView.FULL })).game;
    if (answer === undefined) throw new Error("GetGame answered no game");
    game = answer;
    if (answer.clock) clockOffsetMs = (sent + Date.now()) / 2 - Number(answer.clock.asOfUnixMs);
    // The board now, from GetGame; the history (every position) comes with the events.
    if (positions.length === 0) {
      positions = answer.sanMoves.map((san, i) => ({ fen: "", inCheck: false, san, uci: answer.moves[i] }));
      positions.unshift({ fen: answer.initialFen, inCheck: false });
      positions[answer.ply] = { ...positions[answer.ply], fen: answer.fen, inCheck: answer.inCheck, clock: answer.clock };
      latest = {
        $typeName: "chess.v1.GameSnapshot",
        ply: answer.ply,
        fen: answer.fen,
        sideToMove: answer.sideToMove,
        inCheck: answer.inCheck,
        status: answer.status,
        winner: answer.winner,
        clock: answer.clock,
        drawOfferedBy: answer.drawOfferedBy,
      };
    }
    render();
    say("");
    void follow();
  } catch (e) {
    say(`Opening ${gameId} failed: ${errorText(e)}`);
  }
}

/** Applies the game's events from version 0 on, then live ones, until the page leaves. */
async function follow() {
  const controller = new AbortController();
  follower = controller;
  const stream = client.follow(gameId, { fromVersion: 0, signal: controller.signal, maxAttempts: null });
  setLive("connecting");
  let refresh: ReturnType<typeof setTimeout> | undefined;
  try {
    for await (const event of stream) {
      const known = game?.version ?? 0n;
      apply(event);
      const caughtUp = event.version >= known;
      setLive(stream.reconnects > 0 ? `live (${stream.reconnects} reconnects)` : caughtUp ? "live" : "loading history");
      if (caughtUp) {
        render();
        // The opening and the tags are not in the events: read them again, once things settle.
        if (event.version > known && event.kind.case !== "drawOffered") {
          clearTimeout(refresh);
          refresh = setTimeout(() => void refreshGame(), 100);
        }
      }
    }
  } catch (e) {
    if (!controller.signal.aborted) {
      setLive("stopped");
      say(`Following ${gameId} stopped: ${errorText(e)}`);
    }
  }
}

async function refreshGame() {
  try {
    const sent = Date.now();
    const answer = (await client.getGame({ gameId, view: GameView.BASIC })).game;
    if (answer === undefined) return;
    if (answer.clock) clockOffsetMs = (sent + Date.now()) / 2 - Number(answer.clock.asOfUnixMs);
    game = { ...answer, moves: game?.moves ?? [], sanMoves: game?.sanMoves ?? [], pgn: game?.pgn ?? "" };
    renderFacts();
  } catch {
    // The next event tries again; the stream shows the state meanwhile.
  }
}

function apply(event: GameEvent) {
  events.push(event);
  const state = event.state;
  if (state === undefined) return;
  const k = event.kind;
  if (k.case === "started") {
    positions = [{ fen: state.fen, inCheck: state.inCheck, clock: state.clock }];
  } else if (k.case === "movePlayed") {
    positions.length = state.ply;
    positions[state.ply] = { fen: state.fen, inCheck: state.inCheck, san: k.value.move?.san, uci: k.value.move?.uci, clock: state.clock };
  } else if (k.case === "moveUndone") {
    positions.length = state.ply + 1;
    if (viewPly > state.ply) viewPly = state.ply;
  } else if (positions[state.ply]) {
    positions[state.ply].clock = state.clock;
  }
  latest = state;
  if (game !== undefined && event.version > game.version) {
    game.version = event.version;
    game.ply = state.ply;
    game.status = state.status;
    game.winner = state.winner;
  }
}

function setLive(text: string) {
  liveState = text;
  $("live").textContent = text;
  document.body.dataset.live = text;
}

// ------------------------------------------------------------------------------ drawing
function shownPly(): number {
  const last = positions.length - 1;
  return viewPly < 0 || viewPly > last ? last : viewPly;
}

function render() {
  renderBoard();
  renderMoves();
  renderFacts();
  renderEvents();
  renderClocks();
}

function renderBoard() {
  const ply = shownPly();
  const pos = positions[ply];
  if (pos === undefined || pos.fen === "") {
    // A past position not loaded yet (the events are on their way): keep what is drawn.
    if (boardDrawn) return;
  }
  const fen = pos?.fen || latest?.fen || "";
  const board = drawBoard({
    fen,
    lastMove: pos?.uci ? uciSquares(pos.uci) : undefined,
    inCheck: pos?.inCheck ?? false,
    flipped,
  });
  board.dataset.ply = String(ply);
  board.dataset.fen = fen;
  $("board").replaceChildren(board);
  $("fen").textContent = fen;
  const last = positions.length - 1;
  $("position").textContent = ply === last ? `ply ${ply} (latest)` : `ply ${ply} of ${last}`;
  $<HTMLButtonElement>("first").disabled = ply === 0;
  $<HTMLButtonElement>("prev").disabled = ply === 0;
  $<HTMLButtonElement>("next").disabled = ply === last;
  $<HTMLButtonElement>("last").disabled = ply === last;
  if (!boardDrawn) {
    boardDrawn = true;
    document.body.dataset.boardDrawnMs = String(Math.round(performance.now()));
  }
}

function renderMoves() {
  const list = $("moves");
  const shown = shownPly();
  // Move numbers from the start position's FEN (a game from a FEN may start with black).
  const fields = (positions[0]?.fen || game?.initialFen || "").split(/\s+/);
  const blackFirst = fields[1] === "b" ? 1 : 0;
  const firstNumber = Number(fields[5]) || 1;
  const rows: HTMLElement[] = [];
  for (let ply = 1; ply < positions.length; ply++) {
    const i = ply - 1 + blackFirst;
    if (i % 2 === 0 || rows.length === 0) {
      const row = document.createElement("li");
      row.value = firstNumber + Math.floor(i / 2);
      if (i % 2 === 1) row.append(span("…", "san none"));
      rows.push(row);
    }
    const move = span(positions[ply].san ?? "?", ply === shown ? "san shown" : "san");
    move.dataset.ply = String(ply);
    rows[rows.length - 1].append(move);
  }
  list.replaceChildren(...rows);
  list.querySelector(".shown")?.scrollIntoView({ block: "nearest" });
}

function span(text: string, cls: string): HTMLSpanElement {
  const s = document.createElement("span");
  s.className = cls;
  s.textContent = text;
  return s;
}

function renderFacts() {
  const status = latest ?? game;
  if (status === undefined) return;
  const text = statusText(status.status, status.winner, status.sideToMove);
  const node = $("status");
  node.textContent = text;
  node.className = status.status === GameStatus.IN_PROGRESS ? "" : "over";
  document.body.dataset.status = GameStatus[status.status] ?? "";
  // The open game's row in the list follows it too.
  const row = listRows.get(gameId);
  if (row !== undefined && row.cells.length === 3) {
    row.cells[1].textContent = String(latest?.ply ?? game?.ply ?? "");
    row.cells[2].textContent = shortStatus(status.status, status.winner, status.sideToMove);
  }
  const facts: [string, string][] = [];
  if (status.inCheck && status.status === GameStatus.IN_PROGRESS) facts.push(["Check", `${colorName(status.sideToMove)} is in check`]);
  if (status.drawOfferedBy !== Color.UNSPECIFIED) facts.push(["Draw offer", `by ${colorName(status.drawOfferedBy)}, pending`]);
  if (game !== undefined) {
    facts.push(["Opening", game.opening ? `${game.opening.eco} ${game.opening.name} (ply ${game.opening.ply})` : "—"]);
    const variant = Variant[game.variant] ?? String(game.variant);
    facts.push(["Variant", variant.toLowerCase().replace(/_/g, " ") + (game.chess960Position !== undefined ? ` #${game.chess960Position}` : "")]);
    const tc = game.clock?.timeControl;
    facts.push(["Time control", tc ? `${Number(tc.initialMs) / 1000}s + ${Number(tc.incrementMs) / 1000}s` : "untimed"]);
    facts.push(["Version", `${game.version} (ply ${game.ply})`]);
    if (game.tenant) facts.push(["Tenant", game.tenant]);
    for (const [k, v] of Object.entries(game.tags)) facts.push([k, v]);
  }
  const dl = $("facts");
  dl.replaceChildren();
  for (const [k, v] of facts) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    dl.append(dt, dd);
  }
}

function renderEvents() {
  const list = $("events");
  const items = events
    .slice(-200)
    .reverse()
    .map((e) => {
      const li = document.createElement("li");
      li.textContent = `v${e.version} ${timeText(e.atUnixMs)} ${eventText(e)}`.replace(/ +/g, " ");
      return li;
    });
  list.replaceChildren(...items);
}

/** Both clocks: live at the latest ply (the running one counts down), as they were after a past move. */
function renderClocks() {
  const ply = shownPly();
  const atLatest = ply === positions.length - 1;
  const clock = atLatest ? (latest?.clock ?? game?.clock) : positions[ply]?.clock;
  const top = $("clock-top");
  const bottom = $("clock-bottom");
  if (clock === undefined) {
    top.hidden = bottom.hidden = true;
    return;
  }
  top.hidden = bottom.hidden = false;
  const running = atLatest && (latest?.status ?? game?.status) === GameStatus.IN_PROGRESS ? clock.running : Color.UNSPECIFIED;
  const elapsed = Date.now() - clockOffsetMs - Number(clock.asOfUnixMs);
  const left = (c: Color) => {
    const base = Number(c === Color.WHITE ? clock.whiteRemainingMs : clock.blackRemainingMs);
    return running === c ? base - Math.max(0, elapsed) : base;
  };
  const [topColor, bottomColor] = flipped ? [Color.WHITE, Color.BLACK] : [Color.BLACK, Color.WHITE];
  for (const [node, c] of [
    [top, topColor],
    [bottom, bottomColor],
  ] as const) {
    node.textContent = `${colorName(c)} ${clockText(left(c))}`;
    node.className = `clock${running === c ? " running" : ""}${left(c) <= 0 ? " flag" : ""}`;
  }
}

// ------------------------------------------------------------------------------ controls
function step(to: number) {
  const last = positions.length - 1;
  const ply = Math.max(0, Math.min(last, to));
  viewPly = ply === last ? -1 : ply;
  renderBoard();
  renderMoves();
  renderClocks();
}

function wire() {
  $("first").addEventListener("click", () => step(0));
  $("prev").addEventListener("click", () => step(shownPly() - 1));
  $("next").addEventListener("click", () => step(shownPly() + 1));
  $("last").addEventListener("click", () => step(positions.length - 1));
  $("flip").addEventListener("click", () => {
    flipped = !flipped;
    renderBoard();
    renderClocks();
  });
  $("moves").addEventListener("click", (e) => {
    const ply = (e.target as HTMLElement).dataset?.ply;
    if (ply !== undefined) step(Number(ply));
  });
  document.addEventListener("keydown", (e) => {
    const target = e.target as HTMLElement;
    if (!gameId || target.tagName === "INPUT" || target.tagName === "SELECT" || e.altKey || e.ctrlKey || e.metaKey) return;
    const moves: Record<string, () => number> = {
      ArrowLeft: () => shownPly() - 1,
      ArrowRight: () => shownPly() + 1,
      Home: () => 0,
      End: () => positions.length - 1,
    };
    const to = moves[e.key];
    if (to === undefined) return;
    e.preventDefault();
    step(to());
  });
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $<HTMLInputElement>("token");
    if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = "";
    input.blur(); // the arrow keys step through the game again
    restart();
  });
  $("token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    restart();
  });
  $("refresh").addEventListener("click", () => void loadList());
  $("filter").addEventListener("change", () => void loadList());
  $("more").addEventListener("click", () => void loadList(true));
  $("open-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const id = $<HTMLInputElement>("open-id").value.trim();
    if (id) location.search = `?game=${encodeURIComponent(id)}`;
  });
  setInterval(() => {
    if (liveState !== "" && shownPly() === positions.length - 1 && latest?.clock?.running) renderClocks();
  }, 100);
}

function restart() {
  client = makeClient();
  $("token-state").textContent = sessionStorage.getItem(TOKEN_KEY) ? "token set (this tab)" : "no token";
  say("");
  positions = [];
  events = [];
  void loadList();
  void openGame();
}

wire();
restart();

// The board as SVG, drawn from a FEN: squares, coordinates, pieces (Unicode glyphs), the
// last move's squares and the checked king. Pure DOM construction, no chess rules: the
// server says which move was last and whether the side to move is in check.

const SVG = "http://www.w3.org/2000/svg";

/** What one board shows. */
export interface BoardView {
  /** FEN (only the placement field is read; a crazyhouse pocket `[..]` is ignored). */
  fen: string;
  /** The last move's squares (`e2`, `e4`), highlighted. */
  lastMove?: { from?: string; to: string };
  /** The side to move is in check: its king's square is marked. */
  inCheck: boolean;
  /** Black at the bottom. */
  flipped: boolean;
}

// Filled glyphs for both sides (white ones are drawn white with a dark outline), each with
// VS15 (U+FE0E) so that no platform draws the pawn as an emoji.
const GLYPH: Record<string, string> = {
  k: "\u265A\uFE0E",
  q: "\u265B\uFE0E",
  r: "\u265C\uFE0E",
  b: "\u265D\uFE0E",
  n: "\u265E\uFE0E",
  p: "\u265F\uFE0E",
};

const NAMES: Record<string, string> = { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" };

/** The pieces of a FEN's placement field, by square name (`e1` -> `K`). */
export function placement(fen: string): Map<string, string> {
  const field = (fen.trim().split(/\s+/)[0] ?? "").replace(/\[.*$/, "");
  const pieces = new Map<string, string>();
  const ranks = field.split("/").slice(0, 8);
  ranks.forEach((rank, i) => {
    let file = 0;
    for (const c of rank) {
      if (c >= "1" && c <= "8") {
        file += Number(c);
      } else if (/[kqrbnp]/i.test(c)) {
        if (file < 8) pieces.set(`${"abcdefgh"[file]}${8 - i}`, c);
        file++;
      }
      // `~` (a promoted piece in crazyhouse) and anything else: no square.
    }
  });
  return pieces;
}

/** The square of the side to move's king (the FEN's second field says whose turn it is). */
export function kingToMove(fen: string, pieces: Map<string, string>): string | undefined {
  const king = fen.trim().split(/\s+/)[1] === "b" ? "k" : "K";
  for (const [square, piece] of pieces) if (piece === king) return square;
  return undefined;
}

/** The squares a UCI move touches: `e2e4`, `e7e8q`, a drop `N@f3`. */
export function uciSquares(uci: string): { from?: string; to: string } | undefined {
  const drop = /^[A-Za-z]@([a-h][1-8])$/.exec(uci);
  if (drop) return { to: drop[1] };
  const move = /^([a-h][1-8])([a-h][1-8])/.exec(uci);
  return move ? { from: move[1], to: move[2] } : undefined;
}

function el<K extends keyof SVGElementTagNameMap>(
  name: K,
  attrs: Record<string, string | number>,
  text?: string,
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The board as an `<svg>` element, 8 units a side plus a margin for coordinates. */
export function drawBoard(view: BoardView): SVGSVGElement {
  const pieces = placement(view.fen);
  const checked = view.inCheck ? kingToMove(view.fen, pieces) : undefined;
  const svg = el("svg", { viewBox: "0 0 8 8", class: "board", role: "img" });
  const names: string[] = [];
  const xy = (square: string): [number, number] => {
    const file = square.charCodeAt(0) - 97;
    const rank = Number(square[1]) - 1;
    return view.flipped ? [7 - file, rank] : [file, 7 - rank];
  };
  for (let rank = 1; rank <= 8; rank++) {
    for (let file = 0; file < 8; file++) {
      const square = `${"abcdefgh"[file]}${rank}`;
      const [x, y] = xy(square);
      const light = (file + rank) % 2 === 1;
      svg.append(el("rect", { x, y, width: 1, height: 1, class: light ? "sq light" : "sq dark" }));
      if (view.lastMove && (square === view.lastMove.from || square === view.lastMove.to)) {
        svg.append(el("rect", { x, y, width: 1, height: 1, class: "last", "data-square": square }));
      }
      if (square === checked) {
        svg.append(el("rect", { x, y, width: 1, height: 1, class: "check", "data-square": square }));
      }
    }
  }
  // Coordinates inside the edge squares, as on a printed board.
  for (let i = 0; i < 8; i++) {
    const file = view.flipped ? "hgfedcba"[i] : "abcdefgh"[i];
    const rank = view.flipped ? i + 1 : 8 - i;
    svg.append(el("text", { x: i + 0.96, y: 7.94, class: "coord file" }, file));
    svg.append(el("text", { x: 0.04, y: i + 0.2, class: "coord rank" }, String(rank)));
  }
  for (const [square, piece] of pieces) {
    const [x, y] = xy(square);
    const white = piece === piece.toUpperCase();
    const kind = piece.toLowerCase();
    svg.append(
      el(
        "text",
        { x: x + 0.5, y: y + 0.53, class: white ? "pc w" : "pc b", "data-square": square, "data-piece": piece },
        GLYPH[kind],
      ),
    );
    names.push(`${white ? "white" : "black"} ${NAMES[kind]} ${square}`);
  }
  svg.setAttribute("aria-label", names.join(", ") || "empty board");
  return svg;
}

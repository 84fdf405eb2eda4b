// The real chess-server, started by the tests: on a free loopback port (port 0, read back
// from its "listening on" log line), with a temporary data directory, restartable on the
// same port and directory. The binary is $CHESS_SERVER when set, else the repository's
// target/release/chess-server (built by `cargo build --release`).
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createChessClient } from "chess-service-client";
import type { ChessClient, NodeChessClientOptions } from "chess-service-client";

// dist-test/server.js -> the package directory is one level up.
const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export function serverBinary(): string {
  const binary = process.env.CHESS_SERVER || resolve(PACKAGE_DIR, "..", "..", "target", "release", "chess-server");
  if (!existsSync(binary)) {
    throw new Error(
      `no chess-server binary at ${binary}: build it with \`cargo build --release\` or set CHESS_SERVER`,
    );
  }
  return binary;
}

const LISTENING = /listening on (\d+\.\d+\.\d+\.\d+:\d+)/;
const GRPC_WEB = /gRPC-Web on (\d+\.\d+\.\d+\.\d+:\d+)/;

let tmpRoot: string | undefined;
/** A temporary directory for this test process, removed at exit. */
export function tempDir(prefix: string): string {
  if (tmpRoot === undefined) {
    const root = mkdtempSync(join(tmpdir(), "chess-ts-test-"));
    tmpRoot = root;
    process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  }
  return mkdtempSync(join(tmpRoot, prefix));
}

export interface ServerOptions {
  /** Extra flags. */
  args?: string[];
  /** Also serve gRPC-Web (--grpc-web-listen on a free port). */
  grpcWeb?: boolean;
  /** Serve TLS with this certificate and key (PEM files): the URLs are then https. */
  tls?: { cert: string; key: string };
}

/** One chess-server process, restartable on the same ports and data directory. */
export class Server {
  readonly dataDir: string;
  readonly logPath: string;
  port = 0;
  webPort = 0;
  starts = 0;
  private proc: ChildProcess | undefined;
  private readonly clients: ChessClient[] = [];

  constructor(private readonly options: ServerOptions = {}) {
    const dir = tempDir("server-");
    this.dataDir = join(dir, "data");
    this.logPath = join(dir, "server.log");
  }

  get baseUrl(): string {
    return this.options.tls ? `https://localhost:${this.port}` : `http://127.0.0.1:${this.port}`;
  }

  get webUrl(): string {
    return this.options.tls ? `https://localhost:${this.webPort}` : `http://127.0.0.1:${this.webPort}`;
  }

  /** Starts it: on free ports the first time, then on the same ones. */
  async start(): Promise<this> {
    this.starts++;
    const args = [
      "--listen",
      `127.0.0.1:${this.port}`,
      "--data-dir",
      this.dataDir,
      "--log-format",
      "text",
      ...(this.options.grpcWeb ? ["--grpc-web-listen", `127.0.0.1:${this.webPort}`] : []),
      ...(this.options.tls ? ["--tls-cert", this.options.tls.cert, "--tls-key", this.options.tls.key] : []),
      ...(this.options.args ?? []),
    ];
    const log = openSync(this.logPath, "a");
    writeSync(log, `--- start ${this.starts}: ${args.join(" ")}\n`);
    const offset = statSync(this.logPath).size;
    const proc = spawn(serverBinary(), args, {
      stdio: ["ignore", log, log],
      env: { ...process.env, RUST_LOG: "info" },
    });
    closeSync(log);
    this.proc = proc;
    let exited = false;
    proc.once("exit", () => (exited = true));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const text = readFileSync(this.logPath, "utf8").slice(offset);
      const main = LISTENING.exec(text);
      const web = GRPC_WEB.exec(text);
      if (main && (!this.options.grpcWeb || web)) {
        this.port = Number(main[1].split(":")[1]);
        if (web) this.webPort = Number(web[1].split(":")[1]);
        return this;
      }
      if (exited) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    this.kill();
    throw new Error(`chess-server did not start; its log:\n${readFileSync(this.logPath, "utf8")}`);
  }

  /** kill -9, as a crash would. */
  kill(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
    return new Promise((done) => {
      proc.once("exit", () => done());
      proc.kill("SIGKILL");
    });
  }

  /** kill -9, then start again on the same ports and data directory. */
  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /** A client of this server (closed by stop()). */
  client(options: Partial<NodeChessClientOptions> = {}): ChessClient {
    const url = options.protocol === "grpc-web" ? this.webUrl : this.baseUrl;
    const client = createChessClient({ baseUrl: url, ...options });
    this.clients.push(client);
    return client;
  }

  /** Closes its clients and kills it. */
  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    await this.kill();
  }
}

/** Starts a server; the caller stops it (t.after). */
export async function startServer(options: ServerOptions = {}): Promise<Server> {
  return new Server(options).start();
}

/** A test CA and a certificate for localhost and 127.0.0.1 that it signed, made with openssl. */
export interface TestCertificates {
  dir: string;
  /** The CA certificate (PEM), to trust. */
  ca: string;
  /** The server's certificate and key (PEM files). */
  cert: string;
  key: string;
}

/** Makes a CA and a localhost certificate with openssl, as tests/grpcurl_walkthrough.sh does. */
export function makeCertificates(): TestCertificates {
  const dir = tempDir("tls-");
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
    "-subj", "/CN=test CA", "-keyout", "ca.key", "-out", "ca.pem");
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
    "-subj", "/CN=localhost", "-keyout", "server.key", "-out", "server.csr");
  writeFileSync(join(dir, "server.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
    "-days", "2", "-extfile", "server.ext", "-out", "server.pem");
  return { dir, ca: join(dir, "ca.pem"), cert: join(dir, "server.pem"), key: join(dir, "server.key") };
}

/**
 * A stdio → Streamable HTTP gateway for tests (MCP basic/transports, "Streamable HTTP"): HTTP
 * clients (the conformance suite) reach a stdio MCP server. Each HTTP session (one `initialize`)
 * gets its own child process, as a stdio server is one session; the HTTP side is the MCP SDK's
 * `StreamableHTTPServerTransport` (sessions, SSE streams per POST, the standalone GET stream).
 *
 * Requests whose `Host` or `Origin` is not the loopback host are refused with 403 (DNS rebinding).
 *
 * Routing of the child's messages: a response goes to its request's stream (the SDK's rule); a
 * `notifications/progress` to the stream of the request that carried its `progressToken`; any
 * other notification to the stream of the newest request still unanswered, else to the standalone
 * GET stream. (Stdio carries no link between a notification and a request; this heuristic keeps a
 * tool's log messages on its call's stream, before the call's response.)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface GatewayOptions {
  /** The stdio server: `command` and `args` of each session's child process. */
  command: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** A session with no open HTTP exchange for this long is closed (ms, default 5000). */
  idleMs?: number;
  /** Receives each child's stderr (default: discarded). */
  onStderr?: (chunk: Buffer) => void;
}

export interface RunningGateway {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Number of sessions (child processes) started so far. */
  readonly sessions: number;
  /** Closes every session (the children's stdin ends; they are killed when still alive after 5 s) and the HTTP server. */
  close(): Promise<void>;
}

type Id = string | number;

class Session {
  readonly transport: StreamableHTTPServerTransport;
  private readonly child: ChildProcess;
  /** Requests sent to the child and not answered yet, oldest first. */
  private readonly open: Id[] = [];
  private readonly tokens = new Map<Id, Id>();
  private queue: Promise<void> = Promise.resolve();
  readonly exited: Promise<void>;
  /** HTTP exchanges (POSTs, the GET stream) still open. */
  private active = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(options: GatewayOptions, onInitialized: (id: string, s: Session) => void) {
    this.child = spawn(options.command, [...options.args], { stdio: ["pipe", "pipe", "pipe"], env: options.env ?? process.env });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    this.child.stderr!.on("data", (c: Buffer) => options.onStderr?.(c));
    this.child.stdin!.on("error", () => {});
    this.transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => onInitialized(id, this) });
    this.transport.onmessage = (message) => this.toChild(message);
    this.transport.onclose = () => this.child.stdin!.end();
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      let message: JSONRPCMessage;
      try {
        message = JSON.parse(line) as JSONRPCMessage;
      } catch {
        return;
      }
      this.queue = this.queue.then(() => this.toClient(message)).catch(() => {});
    });
  }

  private toChild(message: JSONRPCMessage): void {
    const m = message as { id?: Id; method?: string; params?: { _meta?: { progressToken?: Id } } };
    if (m.id !== undefined && m.method !== undefined) {
      this.open.push(m.id);
      const token = m.params?._meta?.progressToken;
      if (token !== undefined) this.tokens.set(token, m.id);
    }
    this.child.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  private async toClient(message: JSONRPCMessage): Promise<void> {
    const m = message as { id?: Id; method?: string; params?: { progressToken?: Id } };
    if (m.method === undefined && m.id !== undefined) {
      const i = this.open.indexOf(m.id);
      if (i >= 0) this.open.splice(i, 1);
      for (const [token, id] of this.tokens) if (id === m.id) this.tokens.delete(token);
      await this.transport.send(message);
      return;
    }
    const related = m.method === "notifications/progress" ? this.tokens.get(m.params?.progressToken as Id) : this.open.at(-1);
    try {
      await this.transport.send(message, related === undefined ? undefined : { relatedRequestId: related });
    } catch {
      await this.transport.send(message); // the request's stream is gone: the standalone stream
    }
  }

  /**
   * Counts one HTTP exchange until `res` closes. A session without any for `idleMs` is closed: an
   * HTTP client may leave without DELETE, and each session holds a process.
   */
  track(res: { once(event: "close", listener: () => void): unknown }, idleMs: number): void {
    this.active++;
    clearTimeout(this.idleTimer);
    res.once("close", () => {
      if (--this.active > 0) return;
      this.idleTimer = setTimeout(() => void this.close(), idleMs);
      this.idleTimer.unref();
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await this.transport.close();
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text === "" ? undefined : (JSON.parse(text) as unknown);
}

/**
 * DNS rebinding protection (MCP basic/transports, "Security Warning"): a `Host` (or `Origin`, when
 * sent) that does not name the loopback host is refused, so a web page whose name resolves to
 * 127.0.0.1 cannot drive the server.
 */
function isLoopbackHeader(value: string | undefined, optional: boolean): boolean {
  if (value === undefined) return optional;
  let hostname: string;
  try {
    hostname = new URL(value.includes("://") ? value : `http://${value}`).hostname;
  } catch {
    return false;
  }
  return hostname === "localhost" || hostname === "127.0.0.1" || hostname === "[::1]";
}

/** Starts the gateway on an ephemeral loopback port. */
export async function startMcpHttpGateway(options: GatewayOptions): Promise<RunningGateway> {
  const sessions = new Map<string, Session>();
  const all = new Set<Session>();
  let started = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") {
          res.writeHead(404).end();
          return;
        }
        if (!isLoopbackHeader(req.headers.host, false) || !isLoopbackHeader(req.headers.origin, true)) {
          res.writeHead(403, { "content-type": "application/json" });
          res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Forbidden: Host and Origin must be localhost" } }));
          return;
        }
        const sessionId = req.headers["mcp-session-id"];
        const body = req.method === "POST" ? await readBody(req) : undefined;
        let session = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
        if (!session) {
          const isInitialize = req.method === "POST" && (body as { method?: unknown } | undefined)?.method === "initialize";
          if (sessionId !== undefined || !isInitialize) {
            res.writeHead(sessionId !== undefined ? 404 : 400, { "content-type": "application/json" });
            res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Bad Request: no valid session" } }));
            return;
          }
          started++;
          session = new Session(options, (id, s) => sessions.set(id, s));
          all.add(session);
          const s = session;
          void s.exited.then(() => {
            all.delete(s);
            if (s.transport.sessionId) sessions.delete(s.transport.sessionId);
          });
        }
        session.track(res, options.idleMs ?? 5_000);
        await session.transport.handleRequest(req, res, body);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: `gateway: ${(err as Error).message}` } }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get sessions() {
      return started;
    },
    async close() {
      await Promise.all([...all].map((s) => s.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

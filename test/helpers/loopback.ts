/**
 * A loopback HTTP server for tests: records every request (method, path, headers, raw body bytes)
 * and answers with scripted replies, in order, then with a default reply.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  /** Path and query string, e.g. `/hook/abc?x=1`. */
  path: string;
  /** Header names lower-cased, as Node gives them. */
  headers: IncomingHttpHeaders;
  /** The raw body bytes. */
  body: Buffer;
}

/**
 * A reply to send; `hang: true` never answers (for time-out tests); `delayMs` answers that many
 * milliseconds after the request's body arrived (a platform that accepts, slowly).
 */
export interface ScriptedReply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  hang?: boolean;
  delayMs?: number;
}

/** Computes a reply from the request (e.g. to verify a signature before answering). */
export type Responder = (request: RecordedRequest) => ScriptedReply;

export interface Loopback {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Queues replies; each request takes the next one, then the default. */
  reply(...replies: (ScriptedReply | Responder)[]): void;
  /** Stops listening and drops open connections (including hung ones). */
  close(): Promise<void>;
}

/**
 * Starts a server on 127.0.0.1 on a free port.
 * @param fallback the reply when the queue is empty (default `200 ok`)
 */
export async function startLoopback(
  fallback: ScriptedReply | Responder = { status: 200, body: 'ok' },
): Promise<Loopback> {
  const requests: RecordedRequest[] = [];
  const queue: (ScriptedReply | Responder)[] = [];
  const server: Server = createServer((req, res) => {
    void collect(req).then((body) => {
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const next = queue.shift() ?? fallback;
      answer(res, typeof next === 'function' ? next(recorded) : next);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply: (...replies) => void queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function collect(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function answer(res: ServerResponse, reply: ScriptedReply): void {
  if (reply.hang) return;
  if (reply.delayMs) {
    setTimeout(() => answer(res, { ...reply, delayMs: 0 }), reply.delayMs).unref();
    return;
  }
  res.writeHead(reply.status ?? 200, reply.headers ?? { 'content-type': 'text/plain' });
  res.end(reply.body ?? '');
}

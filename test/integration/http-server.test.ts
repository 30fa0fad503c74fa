/**
 * The Node server that `npm start` runs keeps an idle connection open longer than Alertmanager's
 * HTTP client keeps it (5 min, prometheus/common's `IdleConnTimeout`). Node's own default is 5 s:
 * a client that reuses a connection after that races the server's close and gets `EOF`.
 *
 * A raw TCP client, like Go's transport, reuses one connection after an idle gap longer than
 * Node's default; the test waits out that gap (bounded, one wait) and asserts nothing about timing.
 */
import { connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveApp, ALERTMANAGER_IDLE_CONN_TIMEOUT_MS } from '../../shared/http/server.js';
import type { Server } from 'node:http';

/** Longer than Node's default `keepAliveTimeout` (5 s), well under ours. */
const IDLE_GAP_MS = 6_500;

let server: Server;
let port: number;

beforeAll(async () => {
  const app = new Hono().post('/echo', async (c) => c.text(`got ${(await c.req.text()).length} bytes`));
  server = await new Promise<Server>((ok) => {
    const s = serveApp(app, { port: 0, hostname: '127.0.0.1' }, () => ok(s));
  });
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** What one socket saw: its responses' status lines, and whether the server ended it. */
interface Connection {
  socket: Socket;
  ended: boolean;
  /** Sends one POST and resolves with the response's status line (whole response read). */
  post(body: string): Promise<string>;
}

function open(): Promise<Connection> {
  return new Promise((ok, fail) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = '';
    let waiting: ((status: string) => void) | undefined;
    const conn: Connection = {
      socket,
      ended: false,
      post: (body) =>
        new Promise((resolve, reject) => {
          if (conn.ended) return reject(new Error('EOF: the server closed the idle connection'));
          waiting = resolve;
          socket.write(
            `POST /echo HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
        }),
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(buffer.slice(0, end));
      if (end < 0 || !length || buffer.length < end + 4 + Number(length[1])) return;
      const status = buffer.slice(0, buffer.indexOf('\r\n'));
      buffer = buffer.slice(end + 4 + Number(length[1]));
      waiting?.(status);
    });
    socket.on('end', () => (conn.ended = true));
    socket.once('connect', () => ok(conn));
    socket.once('error', fail);
  });
}

describe('serveApp keeps idle connections longer than Alertmanager does', () => {
  it(
    "answers a request reusing a connection after an idle gap longer than Node's default keep-alive",
    async () => {
      const conn = await open();
      expect(await conn.post('first')).toBe('HTTP/1.1 200 OK');
      await new Promise((r) => setTimeout(r, IDLE_GAP_MS));
      expect(conn.ended).toBe(false);
      expect(await conn.post('second')).toBe('HTTP/1.1 200 OK');
      conn.socket.destroy();
    },
    IDLE_GAP_MS + 10_000,
  );

  it("sets keep-alive above the client's idle time and header/request time-outs above keep-alive", () => {
    expect(server.keepAliveTimeout).toBeGreaterThan(ALERTMANAGER_IDLE_CONN_TIMEOUT_MS);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
    expect(server.requestTimeout).toBeGreaterThanOrEqual(server.headersTimeout);
  });
});

/**
 * The webhook's body limit on the server `npm start` runs (@hono/node-server): a request that gives
 * its length is answered from `Content-Length`, a chunked one by counting its bytes (hono's
 * `bodyLimit`); both accept the limit itself and refuse a byte more, and the route reads the body whole.
 */
import type { Server } from 'node:http';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimitByLength } from '../../shared/http/body-limit.js';
import { serveApp } from '../../shared/http/server.js';

const MAX = 1000;
const app = new Hono()
  .use(bodyLimitByLength({ maxSize: MAX, onError: (c) => c.text('too big', 413) }))
  .post('/', async (c) => c.text(`read ${(await c.req.text()).length}`))
  .get('/', (c) => c.text('get'));
let server: Server;
let url: string;

beforeAll(async () => {
  server = await new Promise<Server>((ok) => {
    const s = serveApp(app, { port: 0, hostname: '127.0.0.1' }, () => ok(s));
  });
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

/** A body sent chunked (no Content-Length), in pieces of 300 bytes. */
const chunked = (bytes: number) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let sent = 0; sent < bytes; sent += 300)
        c.enqueue(new TextEncoder().encode('x'.repeat(Math.min(300, bytes - sent))));
      c.close();
    },
  });

const answer = async (res: Response) => `${res.status} ${await res.text()}`;

describe('bodyLimitByLength', () => {
  it('answers a request with Content-Length from the header: the limit passes, a byte more is refused', async () => {
    expect(await answer(await fetch(url, { method: 'POST', body: 'x'.repeat(MAX) }))).toBe(`200 read ${MAX}`);
    expect(await answer(await fetch(url, { method: 'POST', body: 'x'.repeat(MAX + 1) }))).toBe('413 too big');
  });

  it('counts a chunked body as it arrives, with the same bounds', async () => {
    const post = (bytes: number) => fetch(url, { method: 'POST', body: chunked(bytes), duplex: 'half' } as RequestInit);
    expect(await answer(await post(MAX))).toBe(`200 read ${MAX}`);
    expect(await answer(await post(MAX + 1))).toBe('413 too big');
  });

  it('leaves requests without a body alone, whatever length they claim', async () => {
    expect(await answer(await app.request('/', { headers: { 'content-length': String(MAX + 1) } }))).toBe('200 get');
  });

  it('counts a body whose request gives no length (a web Request, as in the Lambda adapter or app.request)', async () => {
    expect(await answer(await app.request('/', { method: 'POST', body: 'x'.repeat(MAX + 1) }))).toBe('413 too big');
    expect(await answer(await app.request('/', { method: 'POST', body: 'x'.repeat(MAX) }))).toBe(`200 read ${MAX}`);
  });
});

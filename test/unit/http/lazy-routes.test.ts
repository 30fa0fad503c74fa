/**
 * Routes loaded on their first request (`shared/http/lazy-routes.ts`) answer as routes mounted with
 * `app.route` would: the mounting app's error answer and 404 stay the only ones, and a failed load is
 * tried again on the next request.
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { mountLazy } from '../../../shared/http/lazy-routes.js';

/** An app like `createApp`: its own 404 and error answers, and the lazily mounted routes under `/v1/x`. */
function appWith(load: () => Promise<Hono>) {
  const app = new Hono({ strict: false });
  const seen: string[] = [];
  mountLazy(app, '/v1/x', load);
  app.notFound((c) => c.json({ error: `no route for ${c.req.method} ${c.req.path}` }, 404));
  app.onError((err, c) => {
    seen.push(err.message);
    return err instanceof HTTPException ? err.getResponse() : c.json({ error: 'internal error, retry later' }, 503);
  });
  return { app, seen };
}

function routes(): Hono {
  const sub = new Hono();
  sub.get('/:id', (c) => c.text(`item ${c.req.param('id')}`));
  sub.post('/:id', async (c) => c.text(`posted ${await c.req.text()}`));
  sub.get('/boom/now', () => {
    throw new Error('boom');
  });
  sub.get('/refuse/now', () => {
    throw new HTTPException(403, { message: 'no' });
  });
  return sub;
}

describe('mountLazy', () => {
  it('loads the routes once, on the first request, and answers them (trailing slash too)', async () => {
    let loads = 0;
    const { app } = appWith(async () => (loads++, routes()));
    expect(loads).toBe(0);
    expect(await (await app.request('/v1/x/a')).text()).toBe('item a');
    expect(await (await app.request('/v1/x/b/')).text()).toBe('item b');
    expect(await (await app.request('/v1/x/c', { method: 'POST', body: 'hello' })).text()).toBe('posted hello');
    expect(loads).toBe(1);
  });

  it("answers a path it has no route for with the mounting app's 404", async () => {
    const { app } = appWith(async () => routes());
    for (const [path, method] of [
      ['/v1/x', 'GET'],
      ['/v1/x/a/b/c', 'GET'],
      ['/v1/x/a', 'DELETE'],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ error: `no route for ${method} ${path}` });
    }
  });

  it("passes the routes' errors to the mounting app's error handler", async () => {
    const { app, seen } = appWith(async () => routes());
    expect((await app.request('/v1/x/boom/now')).status).toBe(503);
    expect((await app.request('/v1/x/refuse/now')).status).toBe(403);
    expect(seen).toEqual(['boom', 'no']);
  });

  it('answers 5xx when the load fails, and loads again on the next request', async () => {
    let loads = 0;
    const { app, seen } = appWith(async () => {
      if (loads++ === 0) throw new Error('chunk not readable');
      return routes();
    });
    expect((await app.request('/v1/x/a')).status).toBe(503);
    expect(seen).toEqual(['chunk not readable']);
    expect(await (await app.request('/v1/x/a')).text()).toBe('item a');
    expect(loads).toBe(2);
  });
});

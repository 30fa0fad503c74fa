/**
 * Routes whose module is loaded on their first request, not when the app is built: the
 * acknowledgement page, the Slack interactions and the charts are what people click, never what a
 * webhook needs, so a Lambda's cold init (`functions/lambda.ts`) need not load, compile and build
 * them (~35 KB of the receiver's bundle, `npm run bench -- floor`). esbuild puts a module reached only
 * through `await import()` in a chunk of its own (`infra/node-function.ts`, code splitting).
 *
 * Why our own and not Hono's: Hono has no lazy route, and its router cannot take routes once it has
 * matched a request. So the loaded routes live in an app of their own, mounted at the same path, and
 * the request is passed to it whole. Its errors and its "no such route" go back to this app, so
 * `createApp`'s error answers (503, rejections logged) and its 404 stay the only ones, as when the
 * routes were mounted with `app.route`.
 */
import { Hono, type Handler } from 'hono';
import { lazyAsync } from '../core/lazy.js';

/** Thrown by the loaded app when none of its routes matches: the mounting app answers its own 404. */
class NoSuchRoute extends Error {}

/**
 * Mounts at `path` (and below it) the routes `load` resolves to, loading them on the first request
 * there. A failed load is not kept: the request fails (the app's error answer, 5xx) and the next one loads again.
 * @param load resolves to the routes, relative to `path` (as for `app.route(path, routes)`)
 */
export function mountLazy(app: Hono, path: string, load: () => Promise<Hono>): void {
  const loaded = lazyAsync(() =>
    load().then((routes) => {
      const mounted = new Hono({ strict: false }).route(path, routes);
      mounted.notFound(() => {
        throw new NoSuchRoute();
      });
      mounted.onError((err) => {
        throw err;
      });
      return mounted;
    }),
  );
  const handler: Handler = async (c, next) => {
    const routes = await loaded();
    try {
      return await routes.fetch(c.req.raw, c.env);
    } catch (err) {
      if (!(err instanceof NoSuchRoute)) throw err;
      // The mounting app's own 404 (its notFound handler), as for any path it has no route for.
      await next();
      return c.res;
    }
  };
  // Hono's `/*` matches the path itself too.
  app.all(`${path}/*`, handler);
}

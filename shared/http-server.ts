/**
 * Serves the Hono app on Node's HTTP server (`npm start`, and the tests that need a real socket).
 * `functions/server.ts` is wiring only; this is where the server is built.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';

export interface ServeOptions {
  /** TCP port; `0` picks a free one. */
  port: number;
  /** Address to listen on, e.g. `0.0.0.0` or `127.0.0.1`. */
  hostname: string;
}

/**
 * Starts listening and returns Node's `http.Server` (listening is asynchronous: wait for
 * `onListening`, or the server's `'error'` event).
 *
 * @param app anything with Hono's `fetch(request)`
 * @param onListening called once with the bound address
 */
export function serveApp(app: { fetch: (request: Request) => Response | Promise<Response> }, options: ServeOptions, onListening?: (info: AddressInfo) => void): Server {
  return serve({ fetch: app.fetch, port: options.port, hostname: options.hostname }, onListening) as Server;
}

/** Placeholder until the fix: Alertmanager's idle-connection time, ms. */
export const ALERTMANAGER_IDLE_CONN_TIMEOUT_MS = 5 * 60_000;

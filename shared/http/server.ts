/**
 * Serves the Hono app on Node's HTTP server (`npm start`, and the tests that need a real socket).
 * `functions/server.ts` is wiring only; this is where the server and its time-outs are built.
 *
 * Time-outs: Alertmanager's HTTP client (prometheus/common `config.NewClientFromConfig`) keeps an
 * idle connection for up to 5 minutes and reuses it for the next notification. Node's server closes
 * an idle connection after 5 s by default, so a notification sent as the server closes gets
 * `Post …: EOF` (a failed attempt, retried at best). The server must therefore keep idle connections
 * longer than any client does: then the client always closes first.
 * In Lambda the Function URL's front end holds the client connections; those are not ours to tune.
 *
 * @see https://github.com/prometheus/common/blob/main/config/http_config.go (`idleConnTimeout: 5 * time.Minute`)
 * @see https://nodejs.org/api/http.html#serverkeepalivetimeout
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';

/** How long Alertmanager's HTTP client keeps an idle connection for reuse, ms (prometheus/common default). */
export const ALERTMANAGER_IDLE_CONN_TIMEOUT_MS = 5 * 60_000;

/** How long the server keeps an idle connection open, ms: above every client's idle time. */
export const KEEP_ALIVE_TIMEOUT_MS = 6 * 60_000;

/**
 * Time allowed to receive a request's headers, ms. Kept above the keep-alive time-out, the usual rule
 * for Node servers behind clients with long-lived connections: in some Node versions this timer ran
 * on a reused connection from before its idle time, and a lower value then ended kept connections.
 */
export const HEADERS_TIMEOUT_MS = KEEP_ALIVE_TIMEOUT_MS + 5_000;

/** Time allowed to receive a whole request, ms. Node requires it ≥ the headers time-out. */
export const REQUEST_TIMEOUT_MS = HEADERS_TIMEOUT_MS;

export interface ServeOptions {
  /** TCP port; `0` picks a free one. */
  port: number;
  /** Address to listen on, e.g. `0.0.0.0` or `127.0.0.1`. */
  hostname: string;
}

/**
 * Starts listening with the time-outs above and returns Node's `http.Server` (listening is
 * asynchronous: wait for `onListening`, or the server's `'error'` event).
 *
 * @param app anything with Hono's `fetch(request)`
 * @param onListening called once with the bound address
 */
export function serveApp(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  options: ServeOptions,
  onListening?: (info: AddressInfo) => void,
): Server {
  return serve(
    {
      fetch: app.fetch,
      port: options.port,
      hostname: options.hostname,
      serverOptions: {
        keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
        headersTimeout: HEADERS_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
      },
    },
    onListening,
  ) as Server;
}

/** How often a draining server closes the connections that went idle since, ms. */
const DRAIN_POLL_MS = 100;

/**
 * Stops a server as `SIGTERM` asks (`npm start`, `docker stop`): no new connections; every request in
 * flight runs to its answer (a webhook answers after its delivery, so a group being delivered is not
 * cut short), and each kept-alive connection is closed as soon as it is idle (Alertmanager keeps them
 * for minutes: `server.close()` alone would wait for that). After `deadlineMs` the rest is cut.
 * @param deadlineMs the longest wait, milliseconds; keep it above the 20 s delivery budget and under the
 *   time the supervisor gives before SIGKILL (`docker stop --time`, compose `stop_grace_period`)
 * @returns when every connection has closed
 * @see https://nodejs.org/api/http.html#servercloseidleconnections
 */
export function drain(server: Server, deadlineMs: number): Promise<void> {
  return new Promise((resolve) => {
    const poll = setInterval(() => server.closeIdleConnections(), DRAIN_POLL_MS);
    const deadline = setTimeout(() => server.closeAllConnections(), deadlineMs);
    server.close(() => {
      clearInterval(poll);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

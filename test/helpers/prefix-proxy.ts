/**
 * A small loopback reverse proxy that serves an upstream under a path prefix and strips it, as
 * `location /alerts/ { proxy_pass http://app/; }` in nginx or a Traefik `StripPrefix` middleware do:
 * `GET /alerts/v1/ack/x` → upstream `GET /v1/ack/x`. Anything outside the prefix is its own 404, so a
 * link, form or redirect that forgets the prefix fails visibly. It adds the usual `X-Forwarded-*`
 * headers and passes every other header, both ways, untouched (`Location` and `Set-Cookie` included:
 * the app must get those right itself). Written here because no real proxy is installed.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the proxy handled it. */
export interface ProxiedRequest {
  method: string;
  /** The path the browser asked for, prefix included. */
  path: string;
  /** What the upstream (or the proxy itself, outside the prefix) answered. */
  status: number;
  /** The `Set-Cookie` lines of the answer. */
  setCookie: string[];
  /** The browser's `Origin` and `Sec-Fetch-Site` headers, when it sent them. */
  origin?: string;
  secFetchSite?: string;
}

export interface PrefixProxy {
  /** `http://127.0.0.1:PORT` (no prefix, no trailing slash). */
  url: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

/**
 * @param upstream base URL of the app, e.g. `http://127.0.0.1:8080` (it may start listening later)
 * @param prefix the public path prefix, e.g. `/alerts` (leading slash, no trailing slash)
 * @param options.responseHeaders headers the proxy sets on every answer, replacing the app's (as nginx's
 *   `proxy_hide_header` with `add_header` does), e.g. `{ 'referrer-policy': 'no-referrer' }`
 */
export async function startPrefixProxy(
  upstream: string,
  prefix: string,
  options: { responseHeaders?: Record<string, string> } = {},
): Promise<PrefixProxy> {
  const requests: ProxiedRequest[] = [];
  const target = new URL(upstream);
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const log = (status: number, headers: IncomingHttpHeaders) =>
      requests.push({
        method: req.method ?? '',
        path,
        status,
        setCookie: [headers['set-cookie'] ?? []].flat(),
        ...(req.headers.origin !== undefined && { origin: req.headers.origin }),
        ...(req.headers['sec-fetch-site'] !== undefined && { secFetchSite: String(req.headers['sec-fetch-site']) }),
      });
    if (path !== prefix && !path.startsWith(`${prefix}/`) && !path.startsWith(`${prefix}?`)) {
      log(404, {});
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`outside ${prefix}: ${path}\n`);
      return;
    }
    const { connection: _hopByHop, ...passed } = req.headers;
    const headers = {
      ...passed,
      host: target.host,
      'x-forwarded-host': req.headers.host ?? '',
      'x-forwarded-proto': 'http',
      'x-forwarded-prefix': prefix,
      'x-forwarded-for': req.socket.remoteAddress ?? '',
    };
    const upstreamPath = path.slice(prefix.length) || '/';
    const forward = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: upstreamPath.startsWith('/') ? upstreamPath : `/${upstreamPath}`,
        headers,
      },
      (answer) => {
        log(answer.statusCode ?? 502, answer.headers);
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...options.responseHeaders });
        answer.pipe(res);
      },
    );
    forward.on('error', (err) => {
      log(502, {});
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream error: ${err.message}\n`);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * A loopback HTTP relay that can be cut: forwards each request to `target()` and returns its answer,
 * or answers 503 while `cut` (a network blip between two real processes). 502 when the target
 * cannot be reached.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Relay {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** While true, every request is answered 503 and not forwarded. */
  cut: boolean;
  close(): Promise<void>;
}

/** @param target the base URL to forward to, read per request (the target may restart elsewhere) */
export async function startRelay(target: () => string): Promise<Relay> {
  const state = { cut: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.cut) return void res.writeHead(503).end('relay cut');
      const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? 'application/json' };
      if (req.headers.authorization) headers.authorization = req.headers.authorization;
      fetch(`${target()}${req.url}`, {
        method: req.method,
        body: req.method === 'POST' ? Buffer.concat(chunks) : undefined,
        headers,
      })
        .then(async (r) =>
          res
            .writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' })
            .end(Buffer.from(await r.arrayBuffer())),
        )
        .catch(() => res.writeHead(502).end('relay failed'));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return Object.assign(state, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  });
}

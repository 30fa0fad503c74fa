/**
 * The AWS SDK's transport to the embedded dynalite without a socket (`npm start`, tests): the SDK's
 * request, as it would go on the wire (serialised, signed, with its headers), is handed to dynalite's
 * own HTTP request listener in this process, and dynalite's answer comes back as the SDK's response.
 * Everything else is the SDK's ordinary path (middleware, serialisation, retries, parsing) and
 * dynalite's (validation, conditions, the table): only loopback HTTP is skipped, which cost each
 * DynamoDB request a client and a server HTTP exchange in the product's own process (issue #10).
 *
 * Our own code because no library does this: the SDK's own handlers all use a network; dynalite
 * exposes only its `http.Server`. Its listener reads `method`, `url`, `headers` and the body events
 * of the request, and `statusCode`, `setHeader` and `end(body)` of the response.
 */
import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type RequestHandler = Extract<NonNullable<DynamoDBClientConfig['requestHandler']>, { handle: unknown }>;
type SdkRequest = Parameters<RequestHandler['handle']>[0];
type SdkResponse = Awaited<ReturnType<RequestHandler['handle']>>['response'];

/**
 * A request handler for a `DynamoDBClient` that calls `server`'s request listener directly.
 * @param server dynalite's server (listening or not); its first `request` listener answers
 * @throws Error at creation when the server has no request listener
 */
export function inProcessHandler(server: Server): RequestHandler {
  const listener = server.listeners('request')[0] as ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  if (!listener) throw new Error('dynalite server has no request listener');
  return {
    handle: (request: SdkRequest) => new Promise((resolve) => listener(...exchange(request, (response) => resolve({ response })))),
    updateHttpClientConfig: () => {},
    httpHandlerConfigs: () => ({}),
    destroy: () => {},
  } as RequestHandler;
}

/** A request as dynalite's listener reads it, and a response that hands its status, headers and body to `done`. */
function exchange(request: SdkRequest, done: (response: SdkResponse) => void): [IncomingMessage, ServerResponse] {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers as Record<string, string>)) headers[name.toLowerCase()] = value;
  const req = Object.assign(new EventEmitter(), { method: request.method, url: request.path || '/', headers });
  const answer: Record<string, string> = {};
  const res = {
    statusCode: 200,
    setHeader: (name: string, value: string | number) => {
      answer[name.toLowerCase()] = String(value);
    },
    end: (body?: string) => done({ statusCode: res.statusCode, headers: answer, body: Buffer.from(body ?? '') } as SdkResponse),
  };
  const body = request.body as string | Uint8Array | undefined;
  // After the listener has attached its handlers, as a socket's data would arrive.
  queueMicrotask(() => {
    // A Uint8Array as a view of its bytes: `Buffer.from(body)` would call the SDK's JSON body's `valueOf`, its string form (warned, copied).
    if (body?.length) req.emit('data', typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
    req.emit('end');
  });
  return [req as unknown as IncomingMessage, res as unknown as ServerResponse];
}

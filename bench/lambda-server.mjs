// The receiver's Lambda bundle behind a loopback HTTP port (bench/floor-shared.ts, bench/floor-cost.ts): each request
// becomes a Function URL event (payload format 2.0, the template in LAMBDA_EVENT with this request's body) passed to
// the bundle's `handler`, one invocation at a time as one Lambda execution environment runs them.
// `GET /bench/billed` answers what Lambda would bill: invocations, their duration from the handler's call until its
// answer (CPU and wait alike) rounded up to the millisecond each, and the init (importing the bundle), ms.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';

const initStarted = performance.now();
const { handler } = await import(pathToFileURL(process.env.LAMBDA_BUNDLE).href);
const initMs = Math.ceil(performance.now() - initStarted);
const template = JSON.parse(process.env.LAMBDA_EVENT);
let queue = Promise.resolve();
let invocations = 0;
let billedMs = 0;
const timed = async (body) => {
  const started = performance.now();
  try {
    return await handler({ ...template, body }, { awsRequestId: `bench-${++invocations}` });
  } finally {
    billedMs += Math.ceil(performance.now() - started);
  }
};
const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/bench/billed')
    return void res.writeHead(200).end(JSON.stringify({ invocations, billedMs, initMs }));
  let body = '';
  for await (const chunk of req) body += chunk;
  const invoke = () => timed(body);
  const answer = (queue = queue.then(invoke, invoke));
  try {
    const { statusCode, body: out } = await answer;
    res.writeHead(statusCode).end(out);
  } catch {
    res.writeHead(502).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));

/**
 * The receiver Lambda as AWS runs it, on this machine: `functions/lambda.ts` bundled by the
 * `AlertReceiver` construct's own esbuild settings (the code `cdk deploy` uploads), loaded as an ES
 * module in a plain Node process and invoked with Lambda events. Used by `npm run lambda:invoke`
 * and by the infra tests, so both prove the same path.
 *
 * Events follow AWS's documented shapes: Function URL requests are payload format 2.0
 * (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads); SNS events
 * (https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html) are passed as recorded.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { AlertReceiver } from '../infra/receiver.js';

const SCRATCH = fileURLToPath(new URL('../.tmp/', import.meta.url));

export interface ReceiverBundle {
  /** Absolute path of the bundled `index.mjs`. */
  path: string;
  /** Removes the scratch directory holding the bundle. */
  dispose(): void;
}

/**
 * Bundles the receiver exactly as `cdk synth`/`cdk deploy` does, into a scratch directory under the
 * repository's git-ignored `.tmp/` (so the bundle could import any package CDK leaves external from
 * the repository's node_modules; the AWS SDK is bundled, `infra/node-function.ts`). Takes a few seconds (esbuild).
 */
export function bundleReceiver(): ReceiverBundle {
  mkdirSync(SCRATCH, { recursive: true });
  const outdir = mkdtempSync(`${SCRATCH}lambda-`);
  const app = new App({ outdir, builtinCloudFormationValidation: false });
  const receiver = new AlertReceiver(new Stack(app, 'Local'), 'Receiver');
  const path = `${outdir}/${(receiver.function.node.findChild('Code') as Asset).assetPath}/index.mjs`;
  return { path, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

/**
 * A Function URL request event (payload format 2.0) carrying `body`, as Lambda passes it to the
 * handler. `headers` are lower-case HTTP header names; `path` defaults to the webhook route.
 */
export function functionUrlEvent(body: string, headers: Record<string, string> = {}, path = '/v1/alertmanager') {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: { 'content-type': 'application/json', 'user-agent': 'Alertmanager/0.25.0', ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: 'local.lambda-url.eu-west-1.on.aws',
      domainPrefix: 'local',
      requestId: 'local-1',
      routeKey: '$default',
      stage: '$default',
      time: '30/Nov/2026:12:00:00 +0000',
      timeEpoch: 1795003200000,
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Alertmanager/0.25.0' },
    },
    body,
    isBase64Encoded: false,
  };
}

/**
 * Any Function URL request (payload format 2.0): `method`, `path` (may carry a query string), lower-case
 * `headers`, `cookies` as Lambda passes them (`name=value` each, apart from the headers), and a text body.
 */
export function functionUrlRequest(request: {
  method: string;
  path: string;
  headers?: Record<string, string>;
  cookies?: string[];
  body?: string;
}) {
  const [path = '/', query = ''] = request.path.split('?');
  const event = functionUrlEvent(request.body ?? '', request.headers ?? {}, path);
  return {
    ...event,
    rawQueryString: query,
    ...(request.cookies?.length && { cookies: request.cookies }),
    body: request.body,
    requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method: request.method } },
  };
}

export interface Invocation {
  /** What the handler returned, one per event, in order; `{ errorType, errorMessage }` when it threw (Lambda's function error). */
  results: any[];
  /** Every JSON line the function wrote to stdout, cold start included: log lines and EMF metric records. */
  lines: Record<string, unknown>[];
  /** The JSON lines written during each event's invocation, one array per event, in order. */
  during: Record<string, unknown>[][];
  /** Every stdout line as written (JSON or not, e.g. the console channel's rendering), per invocation; [0] is the cold start. */
  raw: string[][];
}

/**
 * Cold-starts the bundle once in a child Node process (environment = `env` only, plus PATH) and
 * runs `events` through its `handler` in order, the i-th with `contexts[i]` as the Lambda context
 * (default `{}`).
 *
 * @throws when the process fails or takes longer than `timeoutMs` (default 30 s, Lambda's time-out).
 */
export async function invokeBundle(
  bundle: string,
  env: Record<string, string>,
  events: unknown[],
  { contexts = [], timeoutMs = 30_000 }: { contexts?: object[]; timeoutMs?: number } = {},
): Promise<Invocation> {
  const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
const { readFileSync } = await import('node:fs');
const contexts = JSON.parse(process.env.CONTEXTS);
for (const [i, event] of JSON.parse(readFileSync(process.env.EVENTS_FILE, 'utf8')).entries()) {
  process.stdout.write('${BEGIN}\\n');
  // A thrown error is a function error: Lambda reports it as {errorType, errorMessage} (and retries an async event).
  const result = await handler(event, contexts[i] ?? {}).catch((err) => ({ errorType: err?.name ?? 'Error', errorMessage: String(err?.message ?? err) }));
  process.stdout.write('${RESULT}' + JSON.stringify(result) + '\\n');
}`;
  // Events go through a file: one environment string is capped at 128 KiB, and an SNS event can carry 256 KiB.
  const dir = mkdtempSync(`${tmpdir()}/lambda-events-`);
  writeFileSync(`${dir}/events.json`, JSON.stringify(events));
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    timeout: timeoutMs,
    maxBuffer: 64 * 1024 * 1024,
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      EVENTS_FILE: `${dir}/events.json`,
      CONTEXTS: JSON.stringify(contexts),
    },
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
  const results: any[] = [];
  const lines: Record<string, unknown>[] = [];
  const during: Record<string, unknown>[][] = [];
  const raw: string[][] = [[]];
  for (const line of stdout.split('\n')) {
    if (line === BEGIN) {
      during.push([]);
      raw.push([]);
    } else if (line.startsWith(RESULT)) results.push(JSON.parse(line.slice(RESULT.length)));
    else if (line) raw.at(-1)!.push(line);
    if (line.startsWith('{')) {
      const record = JSON.parse(line) as Record<string, unknown>;
      lines.push(record);
      during.at(-1)?.push(record);
    }
  }
  return { results, lines, during, raw };
}

// Markers the child writes around each invocation; the function's own lines are JSON objects.
const BEGIN = '--- invocation ---';
const RESULT = 'RESULT ';

/**
 * Bundles for the floor benchmark, built with the receiver construct's esbuild settings
 * (infra/node-function.ts `lambdaBuildOptions`: ESM, minified, split, the AWS SDK bundled): the Lambda receiver,
 * a hello-world Hono handler bundled the same way, and `npm start`'s entry without tsx. Measures
 * cold init (a fresh Node process importing the bundle, as Lambda's init phase does) and sizes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { build, type Metafile } from 'esbuild';
import { lambdaBuildOptions } from '../infra/node-function.js';
import { ROOT } from './floor-processes.js';

export const OUT = `${ROOT}.tmp/bench-floor/`;

export interface Bundle {
  /** The entry, `index.mjs`. */
  file: string;
  /** What cold init loads: `index.mjs` and the chunks it imports statically, bytes. */
  bytes: number;
  /** Every code file of the bundle (chunks only `await import()` reaches included; source maps not), bytes. */
  totalBytes: number;
  metafile: Metafile;
  /** The output files cold init loads (keys of `metafile.outputs`). */
  initial: Set<string>;
}

/**
 * Bundles `entry` (relative to the repository) as the stack does (`lambdaBuildOptions`: ESM, minified,
 * split) to `OUT/<name>/index.mjs`.
 * @param awsSdk `bundled`: inside, as deployed; `external`: left to the Lambda runtime's own SDK
 */
export async function bundle(name: string, entry: string, awsSdk: 'external' | 'bundled' = 'bundled'): Promise<Bundle> {
  const outdir = `${OUT}${name}`;
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const options = lambdaBuildOptions(entry, outdir);
  const { metafile } = await build({
    ...options,
    external: awsSdk === 'external' ? ['@aws-sdk/*'] : [],
    logLevel: 'silent',
  });
  const outputs = metafile.outputs;
  const index = Object.keys(outputs).find((o) => o.endsWith('/index.mjs'))!;
  const initial = new Set<string>();
  const visit = (o: string) => {
    if (initial.has(o) || !outputs[o]) return;
    initial.add(o);
    for (const i of outputs[o]!.imports) if (i.kind === 'import-statement') visit(i.path);
  };
  visit(index);
  const sum = (keys: string[]) => keys.reduce((a, k) => a + outputs[k]!.bytes, 0);
  // Source maps are written beside the code (as deployed) but never loaded: not counted.
  const code = Object.keys(outputs).filter((o) => !o.endsWith('.map'));
  return { file: `${outdir}/index.mjs`, bytes: sum([...initial]), totalBytes: sum(code), metafile, initial };
}

/** The hello-world Hono Lambda, written next to the bundles. */
export async function helloBundle(): Promise<Bundle> {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(
    `${OUT}hello.ts`,
    "import { Hono } from 'hono';\nimport { handle } from 'hono/aws-lambda';\nexport const handler = handle(new Hono().get('/', (c) => c.text('hello')));\n",
  );
  return bundle('hello', `${OUT}hello.ts`);
}

/** `npm start`'s entry as plain JavaScript (packages left in node_modules): the product without tsx. */
export async function serverBundle(): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}server.mjs`;
  await build({
    entryPoints: [`${ROOT}functions/server.ts`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: file,
    logLevel: 'silent',
  });
  return file;
}

/** Bytes cold init loads by npm package (`(ours)`: the repository's own code; `AWS SDK`: its packages together), largest first. */
export function bytesByPackage(b: Bundle): [string, number][] {
  const by = new Map<string, number>();
  for (const output of b.initial)
    for (const [path, { bytesInOutput }] of Object.entries(b.metafile.outputs[output]!.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const key = !m
        ? '(ours)'
        : /^@(aws-sdk|aws|smithy|aws-crypto)\/|^fast-xml-parser$|^tslib$/.test(m[1]!)
          ? 'AWS SDK'
          : m[1]!;
      by.set(key, (by.get(key) ?? 0) + bytesInOutput);
    }
  return [...by].sort((a, b) => b[1] - a[1]);
}

export interface ColdStart {
  /** Process start → the import's end (Lambda's init phase), ms. */
  wall: number;
  /** CPU time of the process by then (user + system), ms. */
  cpu: number;
  /** Process start → the first invocation's answer (init + the first invocation), ms; `wall` when no event was given. */
  firstWall: number;
  /** CPU time of the process by then, ms. */
  firstCpu: number;
}

/**
 * A cold start of a bundle: a fresh `node` process imports it (module load and top-level code, as
 * Lambda's init phase) and, when `first` is given, invokes its `handler` once with that event (what
 * Lambda runs next on a cold start), timed inside the process from its start. Anything the bundle loads
 * on first use (`await import()`) and the first invocation needs is in `firstWall`: laziness that only
 * moves cost to the first request cannot make that number smaller.
 * @param node the `node` binary (default: the one running the bench)
 * @param first the first event, and the `statusCode` its answer must have (a failed invocation is not a cold start to time)
 * @returns milliseconds, see {@link ColdStart}; CPU time is less sensitive to other processes' load than
 *   wall time, not a measure of the same thing
 * @throws when the invocation answers another status
 */
export async function coldStartMs(
  file: string,
  env: Record<string, string>,
  node = process.execPath,
  first?: { event: unknown; status: number },
): Promise<ColdStart> {
  const script = `const mod = await import(${JSON.stringify(file)});
const wall = performance.now(); const c0 = process.cpuUsage();
let status;
if (process.env.FIRST_EVENT) status = (await mod.handler(JSON.parse(process.env.FIRST_EVENT), { awsRequestId: 'bench-1' })).statusCode;
const c1 = process.cpuUsage(); const firstWall = performance.now();
process.stdout.write('\\n' + JSON.stringify({ wall, cpu: (c0.user + c0.system) / 1000, firstWall, firstCpu: (c1.user + c1.system) / 1000, status }));
process.exit(0);`;
  const firstEnv = first ? { FIRST_EVENT: JSON.stringify(first.event) } : {};
  const { stdout } = await promisify(execFile)(node, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env, ...firstEnv },
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  // The function's own log lines come first; the measure is the last line.
  const { status, ...ms } = JSON.parse(stdout.slice(stdout.lastIndexOf('\n') + 1)) as ColdStart & { status?: number };
  if (first && status !== first.status)
    throw new Error(`cold start of ${file}: the first invocation answered ${status}, expected ${first.status}`);
  return ms;
}

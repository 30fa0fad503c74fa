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
  const { metafile } = await build({ ...options, external: awsSdk === 'external' ? ['@aws-sdk/*'] : [], logLevel: 'silent' });
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
  writeFileSync(`${OUT}hello.ts`, "import { Hono } from 'hono';\nimport { handle } from 'hono/aws-lambda';\nexport const handler = handle(new Hono().get('/', (c) => c.text('hello')));\n");
  return bundle('hello', `${OUT}hello.ts`);
}

/** `npm start`'s entry as plain JavaScript (packages left in node_modules): the product without tsx. */
export async function serverBundle(): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}server.mjs`;
  await build({ entryPoints: [`${ROOT}functions/server.ts`], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: file, logLevel: 'silent' });
  return file;
}

/** Bytes cold init loads by npm package (`(ours)`: the repository's own code; `AWS SDK`: its packages together), largest first. */
export function bytesByPackage(b: Bundle): [string, number][] {
  const by = new Map<string, number>();
  for (const output of b.initial)
    for (const [path, { bytesInOutput }] of Object.entries(b.metafile.outputs[output]!.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const key = !m ? '(ours)' : /^@(aws-sdk|aws|smithy|aws-crypto)\/|^fast-xml-parser$|^tslib$/.test(m[1]!) ? 'AWS SDK' : m[1]!;
      by.set(key, (by.get(key) ?? 0) + bytesInOutput);
    }
  return [...by].sort((a, b) => b[1] - a[1]);
}

/**
 * Cold init of a bundle: a fresh `node` process imports it (module load and top-level code, as
 * Lambda's init phase), timed inside the process from its start to the import's end.
 * @param node the `node` binary (default: the one running the bench)
 * @returns milliseconds: `wall` from the process's start, `cpu` the process's CPU time by then (user + system;
 *   less sensitive to other processes' load than wall time, not a measure of the same thing)
 */
export async function coldInitMs(file: string, env: Record<string, string>, node = process.execPath): Promise<{ wall: number; cpu: number }> {
  const script = `await import(${JSON.stringify(file)}); const wall = performance.now(); const { user, system } = process.cpuUsage(); process.stdout.write(JSON.stringify({ wall, cpu: (user + system) / 1000 }));`;
  const { stdout } = await promisify(execFile)(node, ['--input-type=module', '-e', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 });
  return JSON.parse(stdout);
}

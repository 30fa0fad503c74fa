/**
 * Bundles for the floor benchmark, built with the receiver construct's esbuild settings
 * (infra/node-function.ts: ESM, minified, `@aws-sdk/*` left to the runtime): the Lambda receiver,
 * a hello-world Hono handler bundled the same way, and `npm start`'s entry without tsx. Measures
 * cold init (a fresh Node process importing the bundle, as Lambda's init phase does) and sizes.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { ROOT } from './floor-processes.js';

export const OUT = `${ROOT}.tmp/bench-floor/`;

const LAMBDA_SETTINGS: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  banner: { js: "import { createRequire as __cjsRequire } from 'node:module'; const require = __cjsRequire(import.meta.url);" },
  mainFields: ['module', 'main'],
  target: 'node22',
  minify: true,
  metafile: true,
  logLevel: 'silent',
};

export interface Bundle {
  file: string;
  bytes: number;
  metafile: Metafile;
}

/**
 * Bundles `entry` (relative to the repository) to `OUT/<name>.mjs`.
 * @param awsSdk `external`: left to the Lambda runtime (the construct's setting); `bundled`: inside
 */
export async function bundle(name: string, entry: string, awsSdk: 'external' | 'bundled' = 'external'): Promise<Bundle> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}${name}.mjs`;
  const result = await build({ ...LAMBDA_SETTINGS, entryPoints: [`${ROOT}${entry}`], outfile: file, external: awsSdk === 'external' ? ['@aws-sdk/*'] : [] });
  const metafile = result.metafile!;
  const bytes = metafile.outputs[Object.keys(metafile.outputs).find((o) => o.endsWith(`${name}.mjs`))!]!.bytes;
  return { file, bytes, metafile };
}

/** The hello-world Hono Lambda, written next to the bundles. */
export async function helloBundle(): Promise<Bundle> {
  mkdirSync(OUT, { recursive: true });
  writeFileSync(`${OUT}hello.ts`, "import { Hono } from 'hono';\nimport { handle } from 'hono/aws-lambda';\nexport const handler = handle(new Hono().get('/', (c) => c.text('hello')));\n");
  return bundle('hello', '.tmp/bench-floor/hello.ts');
}

/** `npm start`'s entry as plain JavaScript (packages left in node_modules): the product without tsx. */
export async function serverBundle(): Promise<string> {
  mkdirSync(OUT, { recursive: true });
  const file = `${OUT}server.mjs`;
  await build({ entryPoints: [`${ROOT}functions/server.ts`], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile: file, logLevel: 'silent' });
  return file;
}

/** Bytes of the bundle's output by npm package (`(ours)`: the repository's own code; `AWS SDK`: its packages together), largest first. */
export function bytesByPackage(b: Bundle): [string, number][] {
  const inputs = Object.values(b.metafile.outputs).find((o) => o.bytes === b.bytes)!.inputs;
  const by = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    const key = !m ? '(ours)' : /^@(aws-sdk|smithy|aws-crypto)\/|^fast-xml-parser$|^tslib$/.test(m[1]!) ? 'AWS SDK' : m[1]!;
    by.set(key, (by.get(key) ?? 0) + bytesInOutput);
  }
  return [...by].sort((a, b) => b[1] - a[1]);
}

/**
 * Cold init of a bundle: a fresh `node` process imports it (module load and top-level code, as
 * Lambda's init phase), timed inside the process from its start to the import's end.
 * @returns milliseconds
 */
export async function coldInitMs(file: string, env: Record<string, string>): Promise<number> {
  const script = `const t0 = performance.now(); await import(${JSON.stringify(file)}); process.stdout.write(String(performance.now()));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 });
  return Number(stdout);
}

/**
 * Where a Lambda bundle's cold init spends its CPU: a fresh `node --cpu-prof` imports the bundle, built
 * with the deployed esbuild settings except minification (a minified bundle is one line per file, and V8's
 * profile places samples by line), and each sample is charged to the module whose code it ran — the
 * `// path` comments esbuild writes before every module of unminified output say which lines are whose.
 * Module-level code of ES modules is inlined into the chunk's top level, so this shows which module's
 * import-time work costs what; `(program)` is V8 parsing and compiling, `(garbage collector)` GC.
 */
import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { LAMBDA_NODE_MAJOR, lambdaBuildOptions } from '../infra/node-function.js';
import { OUT } from './floor-build.js';
import { ROOT } from './floor-processes.js';

/**
 * The `node` binary of Lambda's Node major as `.ci/run` caches it (npm's `node-linux-<arch>` package under
 * `$XDG_CACHE_HOME/llm-alert-pipeline/`), or `undefined` when it has not run here.
 */
export function lambdaNode(): { label: string; path: string } | undefined {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  const path = `${process.env.XDG_CACHE_HOME ?? `${homedir()}/.cache`}/llm-alert-pipeline/node-${LAMBDA_NODE_MAJOR}-${arch}/node_modules/node-linux-${arch}/bin/node`;
  return existsSync(path) ? { label: `node ${LAMBDA_NODE_MAJOR} (Lambda's)`, path } : undefined;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  positionTicks?: { line: number; ticks: number }[];
}

/** Line → module of one unminified output file, from esbuild's `// node_modules/x/y.js` comments. */
function moduleLines(file: string): (line: number) => string {
  const starts: [number, string][] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const m = /^\/\/ ((?:node_modules|shared|functions|\.tmp)\/\S+)$/.exec(text);
      if (m) starts.push([i + 1, m[1]!]);
    });
  return (line) => {
    let owner = '(bundle prelude)';
    for (const [start, path] of starts) {
      if (start > line) break;
      owner = path;
    }
    return owner;
  };
}

/** A module path as the report shows it: npm packages by name (zod and the SDK by subpath), ours by file. */
function group(path: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist-es\/submodules\/([^/]+)|v4\/(core|classic|mini))?/.exec(
    path,
  );
  if (!pkg) return path;
  return pkg[2] || pkg[3] ? `${pkg[1]} (${pkg[2] ?? pkg[3]})` : pkg[1]!;
}

/**
 * Profiles the cold init of `entry` (as {@link coldInitMs} measures it) and sums self time by module.
 * @returns `[module or V8 category, milliseconds]`, largest first, idle excluded
 */
export async function coldInitProfile(
  entry: string,
  env: Record<string, string>,
  node = process.execPath,
): Promise<[string, number][]> {
  const outdir = `${OUT}cold-profile`;
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  await build({ ...lambdaBuildOptions(entry, outdir), minify: false, sourcemap: false, logLevel: 'silent' });
  const script = `await import(${JSON.stringify(`${outdir}/index.mjs`)});`;
  await promisify(execFile)(
    node,
    ['--cpu-prof', `--cpu-prof-dir=${outdir}`, '--cpu-prof-interval=100', '--input-type=module', '-e', script],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      timeout: 60_000,
    },
  );
  const file = readdirSync(outdir).find((f) => f.endsWith('.cpuprofile'))!;
  const profile = JSON.parse(readFileSync(`${outdir}/${file}`, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const lineOwners = new Map<string, (line: number) => string>();
  const ownerOf = (url: string, line: number) => {
    if (!url.startsWith(`file://${outdir}`)) return undefined;
    if (!lineOwners.has(url)) lineOwners.set(url, moduleLines(url.slice('file://'.length)));
    return group(lineOwners.get(url)!(line));
  };
  // Self time per node, spread over its lines by positionTicks, each line charged to its module.
  const micros = new Map<string, number>();
  const add = (key: string, us: number) => micros.set(key, (micros.get(key) ?? 0) + us);
  const nodeMicros = new Map<number, number>();
  profile.samples.forEach((id, i) => nodeMicros.set(id, (nodeMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  for (const n of profile.nodes) {
    const us = nodeMicros.get(n.id);
    if (!us) continue;
    const { url, functionName, lineNumber } = n.callFrame;
    const ticks = n.positionTicks?.reduce((a, p) => a + p.ticks, 0) ?? 0;
    if (ownerOf(url, 1) && ticks) for (const p of n.positionTicks!) add(ownerOf(url, p.line)!, (us * p.ticks) / ticks);
    else
      add(ownerOf(url, lineNumber + 1) ?? (url.startsWith('node:') ? 'node internals' : url ? url : functionName), us);
  }
  micros.delete('(idle)');
  return [...micros].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / 1000]);
}

/**
 * Wall time of each module's import-time code in the cold init of `entry`: the unminified bundle (as
 * {@link coldInitProfile} builds it) gets a timestamp before every module's code, and each module is
 * charged the time until the next one begins (CommonJS modules run inside the `require` of the module
 * that first needs them, so their time lands there). The first mark comes after Node has read and compiled
 * the entry chunk: `(load and compile)` is the time from the import's start to it.
 * @returns `[module, milliseconds]`, largest first
 */
export async function moduleEvaluationMs(
  entry: string,
  env: Record<string, string>,
  node = process.execPath,
): Promise<[string, number][]> {
  const outdir = `${OUT}cold-marks`;
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const { metafile } = await build({
    ...lambdaBuildOptions(entry, outdir),
    minify: false,
    sourcemap: false,
    logLevel: 'silent',
  });
  for (const file of Object.keys(metafile.outputs)) {
    const text = readFileSync(`${ROOT}${file}`, 'utf8').replace(
      /^\/\/ ((?:node_modules|shared|functions|\.tmp)\/\S+)$/gm,
      (line, path: string) => `${line}\nglobalThis.__mark(${JSON.stringify(path)});`,
    );
    writeFileSync(`${ROOT}${file}`, text);
  }
  const script = `const marks = []; globalThis.__mark = (p) => marks.push([p, performance.now()]); const t0 = performance.now(); await import(${JSON.stringify(`${outdir}/index.mjs`)}); marks.push(['(end)', performance.now()]); process.stdout.write(JSON.stringify([t0, marks]));`;
  const { stdout } = await promisify(execFile)(node, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  const [t0, marks] = JSON.parse(stdout) as [number, [string, number][]];
  const ms = new Map<string, number>([['(load and compile)', marks[0]![1] - t0]]);
  for (let i = 0; i + 1 < marks.length; i++) {
    const key = group(marks[i]![0]);
    ms.set(key, (ms.get(key) ?? 0) + marks[i + 1]![1] - marks[i]![1]);
  }
  return [...ms].sort((a, b) => b[1] - a[1]);
}

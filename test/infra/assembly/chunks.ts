/**
 * The lazily loaded chunks of a deployed asset, and whether a test loaded and called each one.
 *
 * A chunk is lazily loaded when some file of the asset reaches it with `import("./…")` (esbuild's code
 * splitting turns each `await import()` into one). It is named by the module it is built from (esbuild's
 * `[name]` in the file name, e.g. `render`), or for a package's `dist-es` index by that package (the
 * last source of its map, or of the chunk it re-exports). Whether it ran is read from V8's coverage of the
 * invocations (`NODE_V8_COVERAGE`): loaded when the file was compiled, called when a function of its own,
 * or of a chunk only it brings in (not already loaded at cold init), ran.
 * @see https://nodejs.org/api/cli.html#node_v8_coveragedir
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assemblyDir, type DeployedFunction } from './deployed.js';

/** A chunk some `await import()` of the asset loads. */
export interface LazyChunk {
  /** Relative to the asset, e.g. `chunks/render-BDLY26CG.mjs`. */
  file: string;
  /** `render`, `pagerduty`, `@aws-sdk/client-scheduler`… */
  name: string;
}

const DYNAMIC = /\bimport\("(\.{1,2}\/[^"]+\.mjs)"\)/g;
const STATIC = /(?:\bfrom\s*|\bimport\s*)"(\.{1,2}\/[^"]+\.mjs)"/g;

function mjsFiles(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? mjsFiles(join(dir, e.name), base)
      : e.name.endsWith('.mjs')
        ? [relative(base, join(dir, e.name))]
        : [],
  );
}

/** Files `file` (relative to the asset) names with `pattern`, relative to the asset. */
function targets(assetDir: string, file: string, pattern: RegExp): string[] {
  const text = readFileSync(join(assetDir, file), 'utf8');
  return [...text.matchAll(pattern)].map((m) => relative(assetDir, resolve(dirname(join(assetDir, file)), m[1]!)));
}

/** `file` and everything it imports statically, transitively (relative to the asset). */
export function staticClosure(assetDir: string, file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const t of targets(assetDir, file, STATIC)) staticClosure(assetDir, t, seen);
  return seen;
}

/** The npm package of the last module in `file` (esbuild writes a chunk's entry module last), if any. */
function packageOf(assetDir: string, file: string): string | undefined {
  const { sources } = JSON.parse(readFileSync(join(assetDir, `${file}.map`), 'utf8')) as { sources: string[] };
  return /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(sources.at(-1) ?? '')?.[1];
}

function chunkName(assetDir: string, file: string): string {
  const stem = /([^/]+)-[A-Z0-9]{8}\.mjs$/.exec(file)?.[1] ?? file;
  if (stem !== 'dist-es' && stem !== 'index') return stem;
  const own = packageOf(assetDir, file);
  if (own) return own;
  const [reexported] = targets(assetDir, file, STATIC);
  return (reexported && packageOf(assetDir, reexported)) ?? stem;
}

/** Every chunk of the asset that an `import()` loads, once each, by name. */
export function lazyChunks(assetDir: string): LazyChunk[] {
  const files = new Set(mjsFiles(assetDir).flatMap((f) => targets(assetDir, f, DYNAMIC)));
  return [...files].sort().map((file) => ({ file, name: chunkName(assetDir, file) }));
}

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; ranges: { startOffset: number; endOffset: number; count: number }[] }[];
}

/** Coverage gathered over several invocations of one function's asset. */
export interface ChunkCoverage {
  function: DeployedFunction;
  /** Pass as `NODE_V8_COVERAGE` to each invocation. */
  dir: string;
  /** For each lazily loaded chunk: whether it was loaded, and whether code of its own ran. */
  report(): { name: string; file: string; loaded: boolean; called: boolean }[];
}

/** A coverage directory for invocations of `fn`, under the run's assembly directory. */
export function chunkCoverage(fn: DeployedFunction): ChunkCoverage {
  mkdirSync(join(assemblyDir(), 'coverage'), { recursive: true });
  const dir = mkdtempSync(join(assemblyDir(), 'coverage', `${fn.logicalId}-`));
  return {
    function: fn,
    dir,
    report() {
      const scripts = readdirSync(dir).flatMap(
        (f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { result: ScriptCoverage[] }).result,
      );
      const inAsset = (url: string) =>
        url.startsWith('file://') ? relative(fn.assetDir, fileURLToPath(url)) : undefined;
      const loaded = new Set(scripts.flatMap((s) => inAsset(s.url) ?? []));
      // A function ran when its own range counted a call (V8 block coverage: the first range is the function's).
      const ran = new Set(
        scripts
          .filter((s) => s.functions.some((f) => f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0))
          .flatMap((s) => inAsset(s.url) ?? []),
      );
      const atInit = staticClosure(fn.assetDir, 'index.mjs');
      return lazyChunks(fn.assetDir).map(({ name, file }) => {
        const own = [...staticClosure(fn.assetDir, file)].filter((f) => f === file || !atInit.has(f));
        return { name, file, loaded: loaded.has(file), called: own.some((f) => ran.has(f)) };
      });
    },
  };
}

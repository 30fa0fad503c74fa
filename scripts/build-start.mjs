/**
 * `npm start`'s build step (package.json `prestart`, so `npm ci && npm start` runs it): esbuild
 * bundles `functions/server.ts` to plain JavaScript in `.tmp/start/`, with a source map, and `npm start`
 * runs that file. Same code path as the sources, stack traces name the `.ts` files and lines (mapped
 * when a trace is formatted, `shared/runtime/stack-traces.ts`); an edit is picked up by the next
 * `npm start` (the build takes well under a second).
 *
 * Why not `node --import tsx` any more: tsx compiles every module in-process at each start and keeps
 * its loader hooks in the request path (~30 MB of RSS and ~7 % of a profile).
 *
 * Packages stay in node_modules (`packages: 'external'`). Code is split as in the Lambda bundle
 * (`lambdaBuildOptions`): what only an `await import()` reaches, the chart renderer of
 * `shared/chart/load.ts`, is a chunk of its own (`chunks/`), so ECharts and resvg — external
 * packages, whose imports would otherwise be hoisted into `server.mjs` — load only on the first
 * chart request; resvg's WebAssembly and the font are read from node_modules.
 *
 * Plain JavaScript, not TypeScript: it runs before anything can compile TypeScript.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm start` runs from (package.json `start` names `server.mjs` in it). */
const outdir = `${root}.tmp/start`;

await build({
  absWorkingDir: root,
  entryPoints: { server: 'functions/server.ts' },
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});

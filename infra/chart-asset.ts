/**
 * The chart renderer in the receiver's asset. `shared/chart/load.ts` reaches `shared/chart/render.ts`
 * (ECharts, resvg's WebAssembly glue) only through `await import()`, so the code-split bundle
 * (`lambdaBuildOptions` in node-function.ts) puts it in a chunk of its own that cold init never loads; the files it
 * reads beside itself (the WebAssembly module and the font; `import.meta.url` of that chunk is in
 * `chunks/`) are copied there after bundling.
 *
 * Why a chunk and not, as before, a second esbuild run writing `chart/renderer.mjs`: one build with one
 * set of options instead of a shell command repeating them, and the code the renderer shares with the
 * receiver (value formatting) exists once. The main bundle and cold init carry none of it either way:
 * ~1 MB of JavaScript, 2.4 MB of WebAssembly, 0.7 MB of font, loaded on the first chart request.
 */
import { join } from 'node:path';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { CHUNK_DIR, REPO_ROOT } from './node-function.js';

/** Files the renderer reads beside itself (see `render.ts`), from their packages. */
const RENDERER_FILES = [
  'node_modules/@resvg/resvg-wasm/index_bg.wasm',
  'node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf',
];

/**
 * Bundling hooks that copy the renderer's files beside the chunks, after `hooks` (e.g. the routing
 * file's) when given.
 */
export function withChartRenderer(hooks?: ICommandHooks): ICommandHooks {
  return {
    beforeBundling: (inputDir, outputDir) => hooks?.beforeBundling(inputDir, outputDir) ?? [],
    beforeInstall: (inputDir, outputDir) => hooks?.beforeInstall(inputDir, outputDir) ?? [],
    afterBundling: (inputDir, outputDir) => [
      ...(hooks?.afterBundling(inputDir, outputDir) ?? []),
      ...RENDERER_FILES.map(
        (file) => `cp ${shellQuote(join(REPO_ROOT, file))} ${shellQuote(join(outputDir, CHUNK_DIR))}/`,
      ),
    ],
  };
}

/** POSIX single-quoting: paths may hold spaces or `$`. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

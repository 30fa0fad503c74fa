/**
 * Ships the chart renderer beside the receiver's bundle, never inside it: `shared/chart/render.ts`
 * (ECharts, resvg's WebAssembly glue) bundled on its own as `chart/renderer.mjs` with the same esbuild
 * settings as the function (`LAMBDA_BUNDLING`), plus the WebAssembly module and the font it reads next
 * to it. `shared/chart/load.ts` imports that file on the first chart request, so the receiver's main
 * bundle and cold start carry none of it (~1 MB of JavaScript, 2.4 MB of WebAssembly, 0.7 MB of font).
 *
 * esbuild cannot split a bundle written to one `--outfile` (what `NodejsFunction` runs), hence a second
 * esbuild run in the bundling hooks rather than a code-split chunk.
 */
import { join } from 'node:path';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LAMBDA_BUNDLING, REPO_ROOT } from './node-function.js';

/** The renderer's source, relative to the repository. */
const RENDERER_SOURCE = 'shared/chart/render.ts';
/** Where the renderer goes in the asset (`BUNDLED_RENDERER` of `shared/chart/load.ts`). */
const RENDERER_OUT = 'chart/renderer.mjs';
/** Files the renderer reads beside itself (see `render.ts`), from their packages. */
const RENDERER_FILES = ['node_modules/@resvg/resvg-wasm/index_bg.wasm', 'node_modules/dejavu-fonts-ttf/ttf/DejaVuSans.ttf'];

/** The esbuild command line that bundles the renderer into `outputDir`, from `LAMBDA_BUNDLING`. */
export function rendererBuildCommand(outputDir: string): string {
  const args = [
    join(REPO_ROOT, 'node_modules/.bin/esbuild'),
    join(REPO_ROOT, RENDERER_SOURCE),
    '--bundle',
    '--platform=node',
    '--format=esm',
    `--target=${LAMBDA_BUNDLING.target}`,
    `--main-fields=${LAMBDA_BUNDLING.mainFields.join(',')}`,
    ...(LAMBDA_BUNDLING.minify ? ['--minify'] : []),
    `--banner:js=${LAMBDA_BUNDLING.banner}`,
    ...LAMBDA_BUNDLING.externalModules.map((m) => `--external:${m}`),
    '--log-level=warning',
    `--outfile=${join(outputDir, RENDERER_OUT)}`,
  ];
  return args.map(shellQuote).join(' ');
}

/**
 * Bundling hooks that add the renderer and its files to the asset, after `hooks` (e.g. the routing
 * file's) when given.
 */
export function withChartRenderer(hooks?: ICommandHooks): ICommandHooks {
  return {
    beforeBundling: (inputDir, outputDir) => hooks?.beforeBundling(inputDir, outputDir) ?? [],
    beforeInstall: (inputDir, outputDir) => hooks?.beforeInstall(inputDir, outputDir) ?? [],
    afterBundling: (inputDir, outputDir) => [
      ...(hooks?.afterBundling(inputDir, outputDir) ?? []),
      rendererBuildCommand(outputDir),
      ...RENDERER_FILES.map((file) => `cp ${shellQuote(join(REPO_ROOT, file))} ${shellQuote(join(outputDir, 'chart'))}/`),
    ],
  };
}

/** POSIX single-quoting: paths may hold spaces or `$`, the banner quotes. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

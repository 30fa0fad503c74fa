/**
 * Loads the chart renderer (`render.ts`: ECharts, resvg's WebAssembly, the font) on first use, so
 * none of it is parsed or initialised at cold start, and none of it is in the receiver's main bundle.
 *
 * The Lambda bundle carries the renderer as its own file beside `index.mjs`
 * ({@link BUNDLED_RENDERER}, built with its WebAssembly and font by `infra/chart-asset.ts`); the import
 * names it by a computed URL, which esbuild leaves alone instead of inlining the renderer. From the
 * sources (`npm start`, tests) that file does not exist and the module itself is imported.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChartData } from './data.js';

/** What `render.ts` offers. */
export interface ChartRenderer {
  renderChartPng(data: ChartData): Promise<Uint8Array>;
  renderMessagePng(heading: string, message: string): Promise<Uint8Array>;
}

/** The renderer's path in the Lambda asset, relative to `index.mjs`. */
export const BUNDLED_RENDERER = 'chart/renderer.mjs';

let loading: Promise<ChartRenderer> | undefined;

/**
 * The renderer module, imported once per process.
 * @throws the import's error (a missing file, a broken bundle); the next call tries again
 */
export function loadRenderer(): Promise<ChartRenderer> {
  loading ??= (import(rendererSpecifier()) as Promise<ChartRenderer>).catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

function rendererSpecifier(): string {
  const bundled = new URL(`./${BUNDLED_RENDERER}`, import.meta.url);
  return existsSync(fileURLToPath(bundled)) ? bundled.href : './render.js';
}

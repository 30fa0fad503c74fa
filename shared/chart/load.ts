/**
 * Loads the chart renderer (`render.ts`: ECharts, resvg's WebAssembly, the font) on first use, so
 * none of it is parsed or initialised at cold start.
 *
 * In the Lambda bundle the `await import()` below is a split point: the renderer is a chunk of its own
 * (`chunks/render-<hash>.mjs`, its WebAssembly and font copied beside it by `infra/chart-asset.ts`)
 * that cold init never loads. From the sources (`npm start`, tests) the module itself is imported.
 */
import type { ChartData } from './data.js';

/** What `render.ts` offers. */
export interface ChartRenderer {
  renderChartPng(data: ChartData): Promise<Uint8Array>;
  renderMessagePng(heading: string, message: string): Promise<Uint8Array>;
}

let loading: Promise<ChartRenderer> | undefined;

/**
 * The renderer module, imported once per process.
 * @throws the import's error (a missing file, a broken bundle); the next call tries again
 */
export function loadRenderer(): Promise<ChartRenderer> {
  loading ??= import('./render.js').catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

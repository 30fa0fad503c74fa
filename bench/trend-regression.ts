/**
 * The memory-leak regression's cost: `fitMemoryTrend` (restart detection, Theil–Sen, goodness of
 * fit, sparkline) on the default window's 361 points and on the 11,000 points Prometheus allows
 * in one range query at most.
 */
import { fitMemoryTrend } from '../shared/enrich/trend/index.js';
import type { Point } from '../shared/prometheus/client.js';
import { MAX_POINTS_PER_SERIES } from '../shared/prometheus/step.js';
import { medianMs, round, type Benchmark, type Row } from './harness.js';

/** A noisy leak, 500 MiB/h, with a spike and periodic dips, sampled every 15 s. */
function leak(points: number): Point[] {
  return Array.from({ length: points }, (_, i) => ({
    time: 1_795_934_700 + i * 15,
    value:
      30_000 +
      (500 * i * 15) / 3600 +
      40 * Math.sin(i * 12.9898) +
      (i === points >> 1 ? 20_000 : 0) -
      (i % 160 < 4 ? 300 : 0),
  }));
}

export const trendRegression: Benchmark = {
  name: 'trend',
  description:
    'fitMemoryTrend on 361 and on 11,000 points (median of 15 runs); growth shows the fit stays right when thinned',
  run: async () => {
    const sizes = [361, MAX_POINTS_PER_SERIES];
    const rows: Row[] = [];
    let base = 0;
    for (const n of sizes) {
      const series = leak(n);
      const ms = await medianMs(() => fitMemoryTrend(series, 81_559));
      base ||= ms;
      const trend = fitMemoryTrend(series, 81_559)!;
      rows.push({
        points: n,
        'median ms': round(ms),
        'ratio to 361': round(ms / base),
        'growth MiB/h': round(trend.growthMiBPerHour),
        'R²': round(trend.rSquared),
      });
    }
    return rows;
  },
};

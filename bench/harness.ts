/**
 * What every benchmark shares: the report shape, a timer that reports medians, and a table printer.
 * Benchmarks report; they never assert timings (tests do not either).
 */
import { performance } from 'node:perf_hooks';

/** One line of a benchmark's report: a case and its measured numbers (units in the names). */
export type Row = Record<string, string | number>;

/** A benchmark: a name for the command line and a run that returns its rows. */
export interface Benchmark {
  name: string;
  /** One sentence: what is measured and why. */
  description: string;
  run(): Promise<Row[]>;
  /** What to print after the table (details the run collected); optional. */
  notes?(): string;
}

/**
 * Runs `fn` `runs` times after `warmup` unmeasured runs.
 * @returns the median duration, milliseconds
 */
export async function medianMs(fn: () => unknown, runs = 15, warmup = 3): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const mid = times.length >> 1;
  return times.length % 2 ? times[mid]! : (times[mid - 1]! + times[mid]!) / 2;
}

/** Rounds for display: 3 significant digits. */
export function round(x: number): number {
  return Number(x.toPrecision(3));
}

/** The rows as an aligned text table, columns in the order of the first row's keys. */
export function table(rows: readonly Row[]): string {
  if (rows.length === 0) return '(no rows)';
  // Every row's columns, in order of first use (a partial run's first row may lack some).
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * `npm run bench`: runs every benchmark (or those named on the command line, e.g.
 * `npm run bench -- trend`) and prints one table each. To add one, write a file exporting a
 * {@link Benchmark} and add it to {@link BENCHMARKS}.
 */
import { enrichQueries } from './enrich-queries.js';
import { floor } from './floor.js';
import { matchers } from './matchers.js';
import { table, type Benchmark } from './harness.js';
import { storm } from './storm.js';
import { trendRegression } from './trend-regression.js';

/** The one explicit list of benchmarks, run in this order. */
export const BENCHMARKS: readonly Benchmark[] = [floor, enrichQueries, trendRegression, storm, matchers];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !BENCHMARKS.some((b) => b.name === name));
if (unknown.length) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
console.log(`node ${process.version} on ${process.platform}/${process.arch}`);
for (const bench of BENCHMARKS.filter((b) => wanted.length === 0 || wanted.includes(b.name))) {
  console.log(`\n## ${bench.name}: ${bench.description}\n`);
  console.log(table(await bench.run()));
  if (bench.notes) console.log(bench.notes());
}

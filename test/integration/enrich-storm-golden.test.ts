/**
 * A storm's per-alert enrichment, pinned byte for byte: every alert's `Enrichment` JSON (values,
 * split and breakdown signals, bucket bounds, likely cause, its own query) and the JSON its record
 * stores (`storedEnrichment`), against a Prometheus stand-in whose answers are a pure function of
 * each query's text (test/helpers/storm-prometheus.ts). The digests were recorded from the code
 * before the storm's enrichment was made cheaper: an optimisation that
 * changes what on-call reads, for any alert, fails here and names the alert. Re-recorded since for
 * intended changes only: the stored JSON (the labels its queries are rebuilt from, `basis`); the
 * engines' own series (`model_name!=""`), the waiting queue split by reason, the failures' two
 * counters kept apart, the API server's rejections and configured memory share, and each GPU read once.
 * Re-record (only for an intended change of output): `UPDATE_GOLDEN=1 npx vitest run <this file>`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest, enrichStorm, stormAlerts } from '../../bench/enrich-storm.js';
import { startStormPrometheus } from '../helpers/storm-prometheus.js';

const ALERTS = 2500;
const GOLDEN = new URL('../fixtures/enrich/storm-enrichment-golden.json', import.meta.url);

interface Golden {
  alerts: number;
  /** Per alert, in order: digest of its enrichment JSON and stored-enrichment JSON. */
  digests: string[];
  /** The full JSON of the first alerts (one per shipped rule), to read a difference. */
  examples: string[];
}

let prom: Awaited<ReturnType<typeof startStormPrometheus>>;
beforeAll(async () => {
  prom = await startStormPrometheus(stormAlerts(ALERTS));
});
afterAll(() => prom.close());

describe('a storm group’s enrichment', () => {
  it('is byte-identical, alert by alert, to the enrichment recorded before its optimisation', async () => {
    const { json } = await enrichStorm(stormAlerts(ALERTS), prom.url);
    const digests = json.map(digest);
    if (process.env.UPDATE_GOLDEN === '1')
      writeFileSync(
        GOLDEN,
        `${JSON.stringify({ alerts: ALERTS, digests, examples: json.slice(0, 6) } satisfies Golden, null, 1)}\n`,
      );
    const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Golden;
    expect(json.slice(0, golden.examples.length)).toEqual(golden.examples);
    const differing = digests.flatMap((d, i) => (d === golden.digests[i] ? [] : [i]));
    expect(differing.slice(0, 10), `${differing.length} alerts differ`).toEqual([]);
    expect(digests.length).toBe(golden.alerts);
    // The stand-in answered with values for most alerts: the comparison covers values, not only "no data".
    expect(json.filter((j) => /"value":\d/.test(j)).length).toBeGreaterThan(ALERTS / 2);
  });
});

/**
 * CPU of enriching one storm group in process (shared/enrich, against the answer-from-text Prometheus
 * stand-in of test/helpers/storm-prometheus.ts), and a digest of every alert's enrichment as the
 * pipeline keeps it (`Enrichment` JSON) and as a record stores it (`storedEnrichment` JSON), which
 * test/integration/enrich-storm-golden.test.ts pins byte for byte.
 *
 * The stand-in runs in a child process, so its own work is not counted.
 * Run alone: `npx tsx bench/enrich-storm.ts [alerts=5000] [runs=5]` (`STORM_PROM_EMPTY=1`: empty answers) (add `node --cpu-prof` or
 * `--trace-gc` through `NODE_OPTIONS` to profile). `allocatedMb`: V8 heap allocated per run, from its collections.
 */
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { GCProfiler } from 'node:v8';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Alert } from '../shared/alertmanager/schema.js';
import { silentLogger } from '../shared/core/logger.js';
import { enrichAlerts } from '../shared/enrich/index.js';
import { storedEnrichment } from '../shared/enrich/stored.js';
import { stormWebhook } from '../test/integration/storm-webhook.js';
import { startStormPrometheus } from '../test/helpers/storm-prometheus.js';

/** The storm's evaluation time: ten minutes after its alerts fired. */
const NOW = new Date(Date.parse('2026-11-29T12:42:23.143Z') + 600_000);

/** The storm's alerts (a fresh copy each call, as each webhook is parsed afresh). */
export const stormAlerts = (n: number): Alert[] => stormWebhook(n).alerts as Alert[];

/**
 * Enriches `alerts` against `prometheusUrl`.
 * @returns each alert's enrichment JSON and stored-enrichment JSON, in alert order, and the CPU the call took (ms)
 */
export async function enrichStorm(
  alerts: Alert[],
  prometheusUrl: string,
): Promise<{ json: string[]; cpuMs: number; allocatedMb: number }> {
  const gc = new GCProfiler();
  gc.start();
  const cpu = process.cpuUsage();
  const results = await enrichAlerts(alerts, {
    prometheusUrl,
    timeoutMs: 120_000,
    memoryTrendWindowHours: 6,
    logger: silentLogger,
    now: () => NOW,
  });
  const used = process.cpuUsage(cpu);
  const allocatedMb = allocatedBetweenGcs(gc.stop()) / 1e6;
  const json = alerts.map((a) => {
    const e = results.get(a.fingerprint);
    return `${JSON.stringify(e)}\n${JSON.stringify(e && storedEnrichment(e, a))}`;
  });
  return { json, cpuMs: (used.user + used.system) / 1000, allocatedMb };
}

/**
 * Bytes allocated on the V8 heap over a profile, as seen by its collections: what each found in use
 * before it ran, less what the previous one left (what was allocated after the last one is not counted).
 */
function allocatedBetweenGcs(profile: ReturnType<GCProfiler['stop']>): number {
  let bytes = 0;
  let left: number | undefined;
  for (const { beforeGC, afterGC } of profile?.statistics ?? []) {
    if (left !== undefined) bytes += beforeGC.heapStatistics.usedHeapSize - left;
    left = afterGC.heapStatistics.usedHeapSize;
  }
  return bytes;
}

/** A short digest of one alert's JSON. */
export const digest = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 16);

/**
 * The stand-in in a child process (`--serve`), so the CPU measured is the enrichment's alone.
 * @returns its URL and a stop
 */
async function serveApart(n: number): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve', String(n)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { url: line, close: () => void child.kill() };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const empty = process.env.STORM_PROM_EMPTY === '1';
  if (process.argv[2] === '--serve') {
    const prom = await startStormPrometheus(stormAlerts(Number(process.argv[3])), { empty });
    process.stdout.write(`${prom.url}\n`);
  } else {
    const [n = 5000, runs = 5] = process.argv.slice(2).map(Number);
    const prom = await serveApart(n);
    const cpus: number[] = [];
    const allocated: number[] = [];
    let all = '';
    try {
      for (let i = 0; i < runs; i++) {
        const r = await enrichStorm(stormAlerts(n), prom.url);
        cpus.push(Math.round(r.cpuMs));
        allocated.push(Math.round(r.allocatedMb));
        all = digest(r.json.join('\n'));
      }
    } finally {
      prom.close();
    }
    const sorted = [...cpus].sort((a, b) => a - b);
    process.stdout.write(
      `${JSON.stringify({ alerts: n, empty, cpuMs: cpus, medianCpuMs: sorted[Math.floor(sorted.length / 2)], allocatedMb: allocated, digest: all })}\n`,
    );
  }
}

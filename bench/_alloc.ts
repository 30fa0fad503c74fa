import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { stormAlerts, enrichStorm } from './enrich-storm.js';
import { startStormPrometheus } from '../test/helpers/storm-prometheus.js';
const alerts = stormAlerts(5000);
const prom = await startStormPrometheus(alerts, { empty: process.env.STORM_PROM_EMPTY === '1' });
await enrichStorm(stormAlerts(5000), prom.url);
const s = new Session(); s.connect();
await s.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
await enrichStorm(stormAlerts(5000), prom.url);
const { profile } = await s.post('HeapProfiler.stopSampling');
await prom.close();
const self = new Map<string, number>();
const callers = new Map<string, number>();
const walk = (n: any, stack: string[]) => {
  const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const size = n.selfSize as number;
  self.set(k, (self.get(k) ?? 0) + size);
  if (/^(replace|join|encodeStr|Set|all) /.test(k)) { const c = `${k} <- ${stack.slice(-3).reverse().join(' <- ')}`; callers.set(c, (callers.get(c) ?? 0) + size); }
  for (const c of n.children) walk(c, [...stack, k]);
};
walk(profile.head, []);
let total = 0; for (const v of self.values()) total += v;
console.log('total MB', Math.round(total / 1e6));
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(Math.round(v / 1e6), k);
for (const [k, v] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(Math.round(v / 1e6), k);

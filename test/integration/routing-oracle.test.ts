/**
 * Oracle: the product's routing decision equals the real Alertmanager's (`amtool config routes test`,
 * Debian's amtool 0.25: the classic grammar, Go's RE2) for a table of matchers × label sets. Each
 * matcher becomes one route with `continue: true`, in both an Alertmanager config and our routing
 * file, so one `amtool` run per label set answers for every matcher at once; matchers that
 * Alertmanager refuses must make our routing file fail to load too. UTF-8 label names
 * (Alertmanager 0.27+) are beyond this amtool: test/unit/alertmanager/matchers.test.ts covers them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadRoutingFile, RoutingError } from '../../shared/routing/load.js';
import { formatMatcher } from '../../shared/alertmanager/matchers/index.js';
import { createRouter, type RouteFn } from '../../shared/routing/router.js';
import { findBinary, runBinary } from '../helpers/binaries.js';

/** Matchers Alertmanager accepts, as a route's `matchers:` entry (the YAML string's content). */
const MATCHERS = [
  'alertname=~"(?i)vllm.*"',
  'alertname=~"(?i:VLLM)Queue.*"',
  'model_name=~"qwen3\\-8b"',
  'model_name=~"qwen3\\.8b"',
  'model_name=~"qwen3.8b"',
  'model_name=~qwen3-.*',
  'model_name!~"llama-.*"',
  'kind=~"kv_cache|queue"',
  'kind=~"kv"',
  'kind=~"^kv.*$"',
  'kind=~"kv_cache|"',
  'team=""',
  'team!=""',
  'team=~".+"',
  'summary=~"line1.*"',
  'summary=~"(?s)line1.*"',
  'summary=~"(?m)^line2$"',
  'summary=~"(?sm).*^line2$"',
  'summary="line1\\nline2"',
  'summary=~"\\Qa.b\\E.*"',
  'path="C:\\\\x \\"y\\""',
  'path=~"C:\\\\\\\\.*"',
  'icon=~"\\p{So}"',
  'icon=~"."',
  'icon=~"[^a]"',
  'name=~"[[:upper:]]+"',
  'name=~"\\pL+"',
  'name=~"(?i)straße"',
  'name=~"(?i)k"',
  'name=~"(?i)s"',
  'name=~"\\x{212A}"',
  'name=~"\\d+"',
  'name=~"\\w+"',
  'name=~"\\x41.*"',
  'name=~"a{2,3}"',
  'name=~"(?U)a+?"',
  'name =~ "A.*" ',
  'name=~A\\d*',
  '{severity="critical", kind=~"kv_cache|queue"}',
  '{severity="critical"',
  'severity=critical,',
  'severity="warning"}',
  '{}',
  '',
];

/** Label sets (all names classic: this amtool reads no other). */
const LABEL_SETS: Record<string, string>[] = [
  { alertname: 'VLLMQueueBacklog', severity: 'warning', kind: 'queue', model_name: 'qwen3-8b' },
  { alertname: 'vllmqueueBacklog', severity: 'critical', kind: 'kv_cache', model_name: 'qwen3.8b', team: 'qwen' },
  { alertname: 'VllmQueue', severity: 'critical', kind: 'kv', model_name: 'qwen3x8b' },
  { alertname: 'GPUMemoryLeak', severity: 'warning', kind: '', model_name: 'llama-3.1-70b', team: '' },
  { alertname: 'X', summary: 'line1\nline2', path: 'C:\\x "y"', icon: '🔥' },
  { alertname: 'X', summary: 'a.bc', path: 'C:\\\\share', icon: 'é', name: 'ABC' },
  { alertname: 'X', summary: 'axbc', icon: 'ab', name: 'STRASSE' },
  { alertname: 'X', summary: 'line1 only', name: '42' },
  { alertname: 'X', summary: 'line2', name: 'k' },
  { alertname: 'X', name: '\u212A' }, // KELVIN SIGN: folds with k in RE2's (?i)
  { alertname: 'X', name: '\u017F' }, // LATIN SMALL LETTER LONG S: folds with s
  { alertname: 'X', name: 'héllo' },
  { alertname: 'X', name: '٣٤' }, // Arabic-Indic digits: not \d in RE2
  { alertname: 'X', name: 'A42' },
  { alertname: 'X', name: 'aaa' },
  { alertname: 'X', name: 'a' },
  { alertname: 'X', name: 'straße' },
];

/** Matchers Alertmanager refuses (its config check fails): our file must not load either. */
const REFUSED = [
  'kind=~"(kv"',
  'kind=~"(?=kv)kv_cache"',
  'kind=~"(kv)\\1"',
  'kind=~"a{1001}"',
  'kind=~"\\C"',
  'kind=~"[z-a]"',
  'severity=="critical"',
  'severity="crit"ical"',
  'severity="critical',
  'severity',
  'a=b,,c=d',
];

const amtool = findBinary('amtool');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'routing-oracle-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Alertmanager's config and our routing file for the same routes, each matcher list one route with `continue`. */
function writeConfigs(name: string, matcherLists: string[]): { alertmanager: string; routing: string } {
  const receivers = matcherLists.map((_, i) => `m${i}`);
  const alertmanager = join(dir, `${name}-alertmanager.yml`);
  writeFileSync(
    alertmanager,
    stringify({
      route: {
        receiver: 'default',
        routes: matcherLists.map((m, i) => ({ receiver: receivers[i], matchers: [m], continue: true })),
      },
      receivers: ['default', ...receivers].map((r) => ({ name: r })),
    }),
  );
  const routing = join(dir, `${name}-routing.yml`);
  writeFileSync(
    routing,
    stringify({
      channels: Object.fromEntries(['default', ...receivers].map((r) => [r, { type: 'console' }])),
      routes: matcherLists.map((m, i) => ({ matchers: [m], channels: [receivers[i]], continue: true })),
      default: { channels: ['default'] },
    }),
  );
  return { alertmanager, routing };
}

/** The receivers `amtool config routes test` prints for the labels (values quoted in Alertmanager's syntax). */
async function amtoolRoutes(config: string, labels: Record<string, string>): Promise<string[]> {
  const args = Object.entries(labels).map(([name, value]) => formatMatcher({ name, type: '=', value }));
  const run = await runBinary(amtool, ['config', 'routes', 'test', `--config.file=${config}`, ...args]);
  if (run.code !== 0) throw new Error(`amtool failed (${run.code}): ${run.stderr}`);
  return run.stdout.trim().split(',');
}

describe("routing decisions equal Alertmanager's (amtool config routes test)", () => {
  let configs: { alertmanager: string; routing: string };
  let route: RouteFn;
  beforeAll(() => {
    configs = writeConfigs('accepted', MATCHERS);
    const routing = loadRoutingFile(configs.routing, { settings: {} });
    route = createRouter(routing.routes, routing.defaultChannels);
  });

  it.each(LABEL_SETS.map((labels, i) => [i, labels] as const))('label set %i %j', async (_, labels) => {
    const expected = await amtoolRoutes(configs.alertmanager, labels);
    const ours = route(labels);
    // Name the differing matchers, not just the receivers.
    const differ = (list: string[]) => list.map((r) => MATCHERS[Number(r.slice(1))] ?? r);
    expect(differ(ours)).toEqual(differ(expected));
  });

  it('the table is not trivial: every matcher but the empty ones holds for some label set and fails for another', () => {
    const decisions = LABEL_SETS.map((labels) => route(labels));
    const trivial = MATCHERS.filter(
      (_, i) => decisions.every((d) => d.includes(`m${i}`)) || decisions.every((d) => !d.includes(`m${i}`)),
    );
    expect(trivial).toEqual(['{}', '']);
  });
});

describe('matchers Alertmanager refuses are refused', () => {
  it.each(REFUSED)('%s', async (matcher) => {
    const { alertmanager, routing } = writeConfigs(`refused-${REFUSED.indexOf(matcher)}`, [matcher]);
    const check = await runBinary(amtool, ['check-config', alertmanager]);
    expect(check.code, `amtool accepted ${matcher}`).not.toBe(0);
    expect(() => loadRoutingFile(routing, { settings: {} })).toThrow(RoutingError);
  });
});

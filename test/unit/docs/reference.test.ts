/**
 * The reference in docs/ against the code: settings, HTTP routes, metric names and CDK context keys are
 * the public contract, so the docs must name every one the code has and none it does not.
 *
 * Where the docs list them (any file of docs/, so a topic can move between files):
 * - tables whose first header cell is `Setting`: the environment settings (`shared/runtime/config.ts`'s
 *   schema, and the few the entry points read themselves); `Secret setting`: the settings AWS reads from
 *   the settings secret (`SECRET_SETTINGS`);
 * - tables headed `Route`: `METHOD /path` of every route the Hono app serves;
 * - tables headed `Metric`: every metric of `shared/metrics/catalogue.ts` (and the CloudWatch-only one);
 * - tables headed `Context key`: every key `infra/` reads from CDK context;
 * - the table headed `Rule`: every likely-cause rule of `CAUSE_RULES`, in the order they are tried, with its kinds.
 * Names mentioned anywhere else in the README or docs are checked too: a metric name, a `-c key=…`, a
 * `METHOD /path` of ours, or a setting-like `UPPER_CASE` name must exist.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as context from '../../../infra/context.js';
import { createApp } from '../../../shared/http/app.js';
import {
  ackRoutes,
  chartRoutes,
  feishuCallbackRoutes,
  slackInteractionRoutes,
} from '../../../shared/http/off-webhook.js';
import { ACK_PATH, FEISHU_CALLBACK_PATH, SLACK_INTERACTIONS_PATH } from '../../../shared/ack/links.js';
import { CHART_PATH } from '../../../shared/chart/url.js';
import { CAUSE_RULES } from '../../../shared/enrich/causes/rules.js';
import { COUNTERS, GAUGES, HISTOGRAMS, METRIC_PREFIX } from '../../../shared/metrics/catalogue.js';
import { NOTIFICATIONS_FAILED } from '../../../shared/metrics/emf.js';
import { SETTING_NAMES } from '../../../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../../../shared/runtime/settings-secret.js';
import { codeSpans, type Doc, inlineCode, ROOT, readDocs, tableRows } from '../../helpers/docs.js';

const docs = readDocs();
const reference = docs.filter((d) => d.path.startsWith('docs/'));

/** Every name in the code spans of the first cell of the tables headed `header`, with where it is. */
function listed(header: string, pattern: RegExp): Map<string, string> {
  const names = new Map<string, string>();
  for (const doc of reference)
    for (const row of tableRows(doc.text, header))
      for (const span of codeSpans(row.cells[0]!)) if (pattern.test(span)) names.set(span, `${doc.path}:${row.line}`);
  return names;
}

/** Files of `dir` (recursively) whose names end in one of `extensions`. */
function filesUnder(dir: string, extensions: string[]): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...filesUnder(path, extensions));
    else if (extensions.some((e) => entry.name.endsWith(e))) out.push(path);
  }
  return out;
}

/** What the code calls a missing name, and what the docs call one the code lacks, for a clear failure. */
function compare(documented: Map<string, string>, inCode: Set<string>, allowed: Set<string> = new Set()) {
  return {
    undocumented: [...inCode].filter((n) => !documented.has(n)).sort(),
    unknown: [...documented].filter(([n]) => !inCode.has(n) && !allowed.has(n)).map(([n, where]) => `${n} (${where})`),
  };
}

const SETTING = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{4,}$/;

/**
 * The environment settings the code reads: the schema's, and those the entry points and the runtime read
 * themselves (`env.HOST`, `process.env.SETTINGS_SECRET_ARN`, …), found in the sources.
 */
function settingsInCode(): Set<string> {
  const names = new Set(SETTING_NAMES);
  for (const file of [...filesUnder('shared', ['.ts']), ...filesUnder('functions', ['.ts'])]) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(/\benv\??\.([A-Z][A-Z0-9_]+)\b|\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g))
      names.add(m[1] ?? m[2]!);
  }
  return names;
}

/** The AWS SDK's own settings the docs may name (the SDK reads them, not our code). */
const SDK_SETTINGS = new Set(['AWS_ENDPOINT_URL_SNS', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_REGION']);

/** A route as compared: the method, and the path with each parameter segment reduced to `:`. */
const routeKey = (method: string, path: string) =>
  `${method} ${
    path
      .replace(/\/+$/, '')
      .split('/')
      .map((s) => (s.startsWith(':') ? ':' : s))
      .join('/') || '/'
  }`;

/** Any value for any property: enough to build every route without serving one. */
const anything: never = new Proxy(() => {}, {
  get: (_t, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => '' : anything),
  apply: () => anything,
  construct: () => anything,
}) as never;

/**
 * Every route the app serves, with every optional route on. Routes loaded on first use are mounted as
 * `ALL <path>/*`; each is expanded here into the routes of the module it loads.
 */
function routesInCode(): Set<string> {
  const lazy: Record<string, (deps: never) => { routes: { method: string; path: string }[] }> = {
    [ACK_PATH]: ackRoutes,
    [CHART_PATH]: chartRoutes,
    [SLACK_INTERACTIONS_PATH]: slackInteractionRoutes,
    [FEISHU_CALLBACK_PATH]: feishuCallbackRoutes,
  };
  const routes = new Set<string>();
  for (const { method, path } of createApp({}, anything).routes) {
    if (method !== 'ALL') routes.add(routeKey(method, path));
    else if (path.endsWith('/*') && path !== '/*') {
      const mount = path.slice(0, -2);
      const load = lazy[mount];
      // A route mounted with `app.route` also appears as `ALL <path>/*` (its middleware): its own routes are listed.
      if (!load) continue;
      for (const r of load(anything).routes) if (r.method !== 'ALL') routes.add(routeKey(r.method, mount + r.path));
    }
  }
  return routes;
}

/** The metric names the pipeline exports (Prometheus and CloudWatch). */
const metricsInCode = new Set([
  ...[...Object.keys(COUNTERS), ...Object.keys(HISTOGRAMS), ...Object.keys(GAUGES)].map((n) => METRIC_PREFIX + n),
  NOTIFICATIONS_FAILED,
]);
/** A histogram's series as Prometheus exposes them. */
const metricSeries = new Set([
  ...metricsInCode,
  ...Object.keys(HISTOGRAMS).flatMap((n) => ['_bucket', '_sum', '_count'].map((s) => METRIC_PREFIX + n + s)),
]);

/**
 * The CDK context keys `infra/` reads: those each `…FromContext` reader of `infra/context.ts` asks for,
 * and any read directly with `tryGetContext('…')`.
 */
function contextKeysInCode(): Set<string> {
  const keys = new Set<string>();
  const record = (key: string) => {
    keys.add(key);
    return undefined;
  };
  for (const [name, reader] of Object.entries(context))
    if (name.endsWith('FromContext') && typeof reader === 'function')
      (reader as (get: typeof record) => unknown)(record);
  for (const file of filesUnder('infra', ['.ts']))
    for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(/tryGetContext\(\s*['"]([A-Za-z]\w*)['"]/g))
      keys.add(m[1]!);
  return keys;
}

/** Every occurrence of `pattern` (global) in the docs, as `[match, group 1, "file:line"]`. */
function mentions(pattern: RegExp, of: Doc[] = docs, text = (d: Doc) => d.text) {
  const found: [string, string, string][] = [];
  for (const doc of of)
    text(doc)
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(pattern)) found.push([m[0], m[1] ?? m[0], `${doc.path}:${i + 1}`]);
      });
  return found;
}

describe('docs/ against the code', () => {
  it('names every environment setting, and only settings that exist', () => {
    const documented = listed('Setting', SETTING);
    expect(documented.size, 'no table headed "Setting" in docs/').toBeGreaterThan(0);
    expect(compare(documented, settingsInCode(), SDK_SETTINGS)).toEqual({ undocumented: [], unknown: [] });
  });

  it('names exactly the settings AWS reads from the settings secret', () => {
    const documented = listed('Secret setting', SETTING);
    expect(compare(documented, new Set(SECRET_SETTINGS))).toEqual({ undocumented: [], unknown: [] });
  });

  it('names every route the app serves, and only those', () => {
    const documented = new Map<string, string>();
    for (const doc of reference)
      for (const row of tableRows(doc.text, 'Route'))
        for (const span of codeSpans(row.cells[0]!)) {
          const m = /^([A-Z]+) (\/\S*)$/.exec(span);
          if (m) documented.set(routeKey(m[1]!, m[2]!), `${doc.path}:${row.line}`);
        }
    expect(compare(documented, routesInCode())).toEqual({ undocumented: [], unknown: [] });
  });

  it('names every metric, and only metrics that exist', () => {
    const documented = listed('Metric', new RegExp(`^${METRIC_PREFIX}`));
    expect(compare(documented, metricsInCode)).toEqual({ undocumented: [], unknown: [] });
  });

  it('names every CDK context key, and only keys the stack reads', () => {
    const documented = listed('Context key', /^[a-z][A-Za-z0-9]*$/);
    expect(compare(documented, contextKeysInCode())).toEqual({ undocumented: [], unknown: [] });
  });

  it('lists every likely-cause rule in the order they are tried, with the kinds each applies to', () => {
    const documented = reference.flatMap((doc) =>
      tableRows(doc.text, 'Rule').map((row) => ({ id: codeSpans(row.cells[0]!)[0], kinds: row.cells[2] })),
    );
    expect(documented).toEqual(CAUSE_RULES.map((rule) => ({ id: rule.id, kinds: rule.kinds.join(', ') })));
  });
});

describe('names mentioned anywhere in the README and docs exist', () => {
  it('metric names', () => {
    const unknown = mentions(new RegExp(`\\b${METRIC_PREFIX}[a-z0-9_]*[a-z0-9]`, 'g')).filter(
      ([name]) => !metricSeries.has(name),
    );
    expect(unknown.map(([name, , where]) => `${name} (${where})`)).toEqual([]);
  });

  it('context keys given with -c', () => {
    const keys = contextKeysInCode();
    const unknown = mentions(/-c ([A-Za-z]\w*)=/g).filter(([, key]) => !keys.has(key));
    expect(unknown.map(([m, , where]) => `${m} (${where})`)).toEqual([]);
  });

  it("our routes (`METHOD /path`; other services' `/api/…` and Feishu's `/open-apis/…` paths aside)", () => {
    const routes = routesInCode();
    const unknown: string[] = [];
    for (const doc of docs)
      for (const { code, line } of inlineCode(doc.text)) {
        const m = /^(GET|POST|PUT|PATCH|DELETE|HEAD) (\/[^\s?]*)/.exec(code);
        if (!m || /^\/(api|open-apis)\//.test(m[2]!)) continue;
        if (!routes.has(routeKey(m[1]!, m[2]!.replace(/…$/, '')))) unknown.push(`${code} (${doc.path}:${line})`);
      }
    expect(unknown).toEqual([]);
  });

  // Only names of our settings' families (`SLACK_…`, `ACK_…`, …): other tools' variables (`AWS_PROFILE`,
  // `CUDA_VISIBLE_DEVICES`) may be named freely.
  it("setting-like names of our settings' families exist in the code, the shipped config or the tools", () => {
    const families = new Set(SETTING_NAMES.map((n) => n.split('_')[0]!));
    const corpus = [
      ...['shared', 'functions', 'infra', 'bench', 'scripts', 'test'].flatMap((d) =>
        filesUnder(d, ['.ts', '.mjs', '.cjs', '.yml', '.yaml', '.json']),
      ),
      '.ci/run',
      'compose.yaml',
      '.dependency-cruiser.cjs',
      'package.json',
      'cdk.json',
    ]
      .filter((f) => statSync(join(ROOT, f)).size < 1_000_000)
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    const unknown: string[] = [];
    for (const doc of docs)
      for (const { code, line } of inlineCode(doc.text))
        for (const name of code.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? [])
          if (families.has(name.split('_')[0]!) && !corpus.includes(name))
            unknown.push(`${name} (${doc.path}:${line})`);
    expect(unknown).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find the settings, routes, metrics and context keys of the code', () => {
    expect(settingsInCode()).toContain('HOST');
    expect(settingsInCode()).toContain('SETTINGS_SECRET_ARN');
    expect([...routesInCode()]).toEqual(
      expect.arrayContaining(['POST /v1/alertmanager', 'GET /v1/chart/:', 'POST /v1/slack/interactions']),
    );
    expect([...contextKeysInCode()]).toEqual(expect.arrayContaining(['slackChannel', 'ampWorkspaceArn']));
  });

  it('read a table by its first header cell, not inside fenced blocks', () => {
    const text = [
      '| Setting | x |',
      '|---|---|',
      '| `A_B`, `C_D` | y |',
      '',
      '```',
      '| Setting |',
      '|---|',
      '| `E_F` |',
      '```',
    ].join('\n');
    expect(tableRows(text, 'Setting').flatMap((r) => codeSpans(r.cells[0]!))).toEqual(['A_B', 'C_D']);
  });
});

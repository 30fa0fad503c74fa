/**
 * What Grafana does with a dashboard's Prometheus queries before it sends them, for tests that run
 * the shipped dashboard (`infra/grafana/vllm-fleet.json`) against the real Prometheus: its panels'
 * targets, its query variables resolved in order against the Prometheus HTTP API (`label_values`,
 * the variable's `regex`, `includeAll`/`allValue`), and the interpolation of `$var`,
 * `$__interval` and `$__rate_interval` into PromQL.
 *
 * Written here because Grafana's own code is a browser application, not a library. It follows
 * Grafana 10/11: `public/app/plugins/datasource/prometheus/datasource.ts` (`interpolateQueryExpr`,
 * `prometheusSpecialRegexEscape`), `public/app/features/variables/utils.ts` and
 * `public/app/features/templating/template_srv.ts` (custom all values are not escaped).
 * @see https://grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/
 * @see https://grafana.com/docs/grafana/latest/dashboards/variables/add-template-variables/#__rate_interval
 */
import { readFileSync } from 'node:fs';

export interface Target {
  expr: string;
  refId: string;
  legendFormat?: string;
}

export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
}

export interface Variable {
  type: string;
  name: string;
  query: string | { query: string };
  regex?: string;
  multi?: boolean;
  includeAll?: boolean;
  allValue?: string;
  hide?: number;
  datasource?: { type: string; uid: string };
}

export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
  annotations: { list: Array<{ name: string; expr?: string; datasource?: { uid: string } }> };
}

export const DASHBOARD_FILE = new URL('../../infra/grafana/vllm-fleet.json', import.meta.url);

export function loadDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** A variable's value: `All`, or the values chosen (as a `var-<name>=` URL parameter chooses them). */
export type Choice = 'All' | string[];

/** Grafana's escape of a value placed in a PromQL regex matcher (`=~"$var"`) for a multi-value or All variable. */
function regexEscape(value: string): string {
  return value.replace(/\\/g, '\\\\\\\\').replace(/[$^*{}[\]'+?.()|]/g, '\\\\$&');
}

/** A variable's value as Grafana writes it into a Prometheus query. */
function format(variable: Variable, values: string[], all: boolean): string {
  if (all && variable.allValue !== undefined) return variable.allValue;
  if (!variable.multi && !variable.includeAll) return values[0] ?? '';
  const escaped = values.map(regexEscape);
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join('|')})`;
}

/** `$name` → its value (a name is a whole word, so `$__rate_interval` is never read as `$__rate`); unknown names stay. */
export function interpolate(text: string, values: Record<string, string>): string {
  return text.replace(/\$(\w+)/g, (whole, name: string) => values[name] ?? whole);
}

/** The `$__interval` and `$__rate_interval` of a panel whose step is `stepSeconds`, for a data source scraped every `scrapeSeconds` (Grafana's default 15 s). */
export function intervals(stepSeconds: number, scrapeSeconds = 15): Record<string, string> {
  return {
    __interval: `${stepSeconds}s`,
    __rate_interval: `${Math.max(stepSeconds + scrapeSeconds, 4 * scrapeSeconds)}s`,
  };
}

/** `label_values(selector, label)`, the Prometheus data source's variable query. */
const LABEL_VALUES = /^label_values\((.+),\s*(\w+)\)$/;

/** A variable's regex (`/…/flags`) as a JS RegExp. */
function variableRegex(source: string): RegExp {
  const m = /^\/(.*)\/([gimsuy]*)$/.exec(source);
  return m ? new RegExp(m[1]!, m[2]) : new RegExp(source);
}

/**
 * Resolves the dashboard's query variables in order, as Grafana does on load: each `label_values`
 * query, interpolated with the variables before it, asks Prometheus for the label's values in
 * `[startSeconds, endSeconds]`; the variable's regex keeps its first capture group; values are
 * de-duplicated and sorted. A variable not in `choices` is All.
 * @returns the text each `$name` becomes in a query
 */
export async function resolveVariables(
  prometheusUrl: string,
  dashboard: Dashboard,
  choices: Record<string, Choice>,
  range: { startSeconds: number; endSeconds: number },
): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const variable of dashboard.templating.list) {
    if (variable.type !== 'query') continue;
    const text = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const m = LABEL_VALUES.exec(text.trim());
    if (!m) throw new Error(`variable ${variable.name}: not a label_values() query: ${text}`);
    const choice = choices[variable.name] ?? 'All';
    if (choice !== 'All') {
      values[variable.name] = format(variable, choice, false);
      continue;
    }
    const found = await labelValues(prometheusUrl, interpolate(m[1]!, values), m[2]!, range);
    const regex = variable.regex ? variableRegex(variable.regex) : undefined;
    const options = [...new Set(found.flatMap((v) => (regex ? (regex.exec(v)?.slice(1, 2) ?? []) : [v])))].sort();
    values[variable.name] = format(variable, options, true);
  }
  return values;
}

async function labelValues(
  prometheusUrl: string,
  selector: string,
  label: string,
  range: { startSeconds: number; endSeconds: number },
): Promise<string[]> {
  const params = new URLSearchParams({
    'match[]': selector,
    start: String(range.startSeconds),
    end: String(range.endSeconds),
  });
  const res = await fetch(`${prometheusUrl}/api/v1/label/${label}/values?${params}`, {
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { status: string; data: string[]; error?: string };
  if (body.status !== 'success') throw new Error(`label values of ${label} for ${selector}: ${body.error}`);
  return body.data;
}

/** Every panel that queries, with its targets (rows have none). */
export function queryPanels(dashboard: Dashboard): Panel[] {
  return dashboard.panels.filter((p) => p.targets?.length);
}

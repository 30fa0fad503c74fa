/**
 * `npm run check-rules -- <rules.yml> [more.yml …]`: what your own Prometheus alerting rules can and
 * cannot do with this pipeline (shared/enrich/rule-check.ts): per rule, the metric names no known
 * engine version exposes (it never fires on them), who exposes the others since which version, its
 * kind, signals and the causes it can name, and whether its alerts reach their servers' GPUs. With
 * `PROMETHEUS_URL` set, also how many series of each name exist now (one query per file).
 * Exit status: 1 when a rule can never fire or a file is not a rule file, else 0.
 */
import { readFileSync } from 'node:fs';
import { escapeRegex } from '../shared/prometheus/promql.js';
import { PrometheusClient } from '../shared/prometheus/client.js';
import { checkRuleFile, formatRuleReports, type RuleReport } from '../shared/enrich/rule-check.js';

/** Series per metric name existing now, one `count by (__name__)` query for all of them. */
async function seriesNow(url: string, reports: readonly RuleReport[]): Promise<Map<string, number>> {
  const names = [...new Set(reports.flatMap((r) => r.names.map((n) => n.name)))];
  if (names.length === 0) return new Map();
  const pattern = names.map(escapeRegex).join('|');
  const { result } = await new PrometheusClient(url).instantQuery(`count by (__name__) ({__name__=~"${pattern}"})`);
  return new Map(result.map((s) => [s.metric.__name__ ?? '', s.value]));
}

async function main(files: string[]): Promise<number> {
  if (files.length === 0) {
    console.error('usage: npm run check-rules -- <rules.yml> [more.yml …]   (PROMETHEUS_URL: count the series now)');
    return 2;
  }
  let failed = false;
  for (const file of files) {
    let reports: RuleReport[];
    try {
      reports = checkRuleFile(readFileSync(file, 'utf8'));
    } catch (err) {
      console.error(`${file}: ${(err as Error).message}`);
      failed = true;
      continue;
    }
    const url = process.env.PROMETHEUS_URL;
    const now = url ? await seriesNow(url, reports) : undefined;
    console.log(`${file}: ${reports.length} alerting rules`);
    for (const line of formatRuleReports(reports, now)) console.log(line);
    const never = reports.filter((r) => r.neverFires);
    if (never.length) {
      console.log(`${never.length} of them can never fire on vLLM engines: ${never.map((r) => r.alert).join(', ')}`);
      failed = true;
    }
  }
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));

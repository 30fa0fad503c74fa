/** An in-memory {@link EnrichContext} for unit tests: answers from tables, records what was asked. */
import type { Alert } from '../../../shared/alertmanager/schema.js';
import type { EnrichContext, MemorySettings } from '../../../shared/enrich/enricher.js';
import type { Sample, Series } from '../../../shared/prometheus/client.js';

export const NOW = new Date('2026-11-29T12:45:00Z');

export interface FakeAnswers {
  /** Instant answers by expression (any time), or by `${expr} @${unixSeconds}` for one time. */
  instant?: Record<string, Sample[]>;
  /** Range answers by expression. */
  range?: Record<string, Series[]>;
}

export const sample = (metric: Record<string, string>, value: number, time = NOW.getTime() / 1000): Sample => ({
  metric,
  time,
  value,
});

/**
 * @returns the context and `asked`: one entry per call, `instant @<unix s> <expr>` or `range <window s>[/<step s>] <expr>`
 */
export function fakeContext(peers: readonly Alert[], answers: FakeAnswers = {}, memory: Partial<MemorySettings> = {}) {
  const asked: string[] = [];
  const ctx: EnrichContext = {
    instant: async (expr, at = NOW) => {
      const t = at.getTime() / 1000;
      asked.push(`instant @${t} ${expr}`);
      return answers.instant?.[`${expr} @${t}`] ?? answers.instant?.[expr] ?? [];
    },
    range: async (expr, windowSeconds, step) => {
      asked.push(`range ${windowSeconds}${step ? `/${step}` : ''} ${expr}`);
      return answers.range?.[expr] ?? [];
    },
    now: NOW,
    peers,
    memory: { series: 'DCGM_FI_DEV_FB_USED', unit: 'MiB', windowHours: 6, ...memory },
  };
  /** The distinct expressions asked, without times. */
  const queries = () => [...new Set(asked.map((a) => a.replace(/^(instant @\S+|range \S+) /, '')))];
  return { ctx, asked, queries };
}

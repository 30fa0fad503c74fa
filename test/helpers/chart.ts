/**
 * Chart test helpers: a Prometheus range-query answer shaped like the real API (a matrix over the
 * request's own start, end and step), for loopback servers standing in for Prometheus.
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#range-queries
 */
import { Secret } from '../../shared/core/secret.js';
import { fixture } from './fixtures.js';
import type { RecordedRequest, ScriptedReply } from './loopback.js';

/** A KV-cache-like ratio rising through 0.95 around `firedAt` (epoch seconds). */
export function risingRatio(time: number, firedAt: number): number {
  return 0.7 + 0.3 / (1 + Math.exp(-(time - firedAt + 300) / 200));
}

/** The request's form or query parameters (GET query string or form-encoded POST body). */
export function queryParams(request: RecordedRequest): URLSearchParams {
  const query = request.path.includes('?') ? request.path.slice(request.path.indexOf('?') + 1) : '';
  return new URLSearchParams(request.method === 'POST' ? request.body.toString('utf8') : query);
}

/**
 * Answers `/api/v1/query_range` with one series labelled `metric`, one point per step from start to
 * end, valued `value(time)`.
 */
export function matrixResponder(
  metric: Record<string, string>,
  value: (time: number) => number,
): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    const p = queryParams(request);
    const [start, end, step] = [Number(p.get('start')), Number(p.get('end')), Number(p.get('step'))];
    const values: [number, string][] = [];
    for (let t = Math.ceil(start / step) * step; t <= end; t += step) values.push([t, String(value(t))]);
    const body = JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [{ metric, values }] } });
    return { status: 200, headers: { 'content-type': 'application/json' }, body };
  };
}

/** The signing key of the chart route tests' links. */
export const CHART_KEY = new Secret('chart-routes-ack-secret-0123456789abcdef');
/** The KV-cache alert the chart route tests draw, enrichment unavailable (the chart reads Prometheus itself). */
export const CHART_ALERT = {
  ...fixture('firing-kv-cache-critical').alerts[0]!,
  enrichment: { status: 'unavailable' as const, kind: 'kv_cache' as const, reason: 'test' },
};
/** When it fired, and when its chart link is signed (30 minutes later), epoch milliseconds. */
export const CHART_FIRED_MS = Date.parse(CHART_ALERT.startsAt);
export const CHART_NOW_MS = CHART_FIRED_MS + 30 * 60_000;
/** Link settings signed with {@link CHART_KEY}, valid for an hour. */
export const CHART_SETTINGS = {
  publicUrl: 'https://alerts.example.com',
  keys: { current: CHART_KEY },
  ttlSeconds: 3600,
};

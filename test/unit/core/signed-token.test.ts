import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signAckToken, verifyAckToken, type AckClaims } from '../../../shared/ack/token.js';
import type { ChartSpec } from '../../../shared/chart/spec.js';
import { signChartToken, verifyChartToken } from '../../../shared/chart/token.js';
import { Secret } from '../../../shared/core/secret.js';
import { openToken, signToken, TOKEN_PROBLEM_STATUS } from '../../../shared/core/signed-token.js';

const NOW = Date.parse('2026-11-29T12:45:00Z');
const KEY = new Secret('current-ack-secret-0123456789abcdef');

const ackClaims: AckClaims = {
  fingerprints: ['936e109b8c52c001', 'c10780c1bb3d6376'],
  group: '{}:{alertname="VLLMKVCacheNearlyFull"}',
  channel: 'slack',
  issuedAt: NOW / 1000,
  expiresAt: NOW / 1000 + 3600,
  set: { id: '0123456789abcdef0123456789abcdef', alerts: 120 },
};
const chart: ChartSpec = {
  query: 'vllm:gpu_cache_usage_perc{instance="127.0.0.1:9800"}',
  labels: { alertname: 'VLLMKVCacheNearlyFull', instance: '127.0.0.1:9800' },
  title: 'VLLMKVCacheNearlyFull · KV cache usage',
  unit: 'ratio',
  firedAt: NOW / 1000 - 157,
  threshold: { op: '>', value: 0.95 },
};

// Minted by the earlier token code of shared/ack/token.ts and shared/chart/token.ts, before they shared
// shared/core/signed-token.ts, from the claims above and KEY: links already sent must keep working.
const LEGACY_ACK =
  'eyJ2IjoxLCJmIjpbIjkzNmUxMDliOGM1MmMwMDEiLCJjMTA3ODBjMWJiM2Q2Mzc2Il0sImciOiJ7fTp7YWxlcnRuYW1lPVwiVkxMTUtWQ2FjaGVOZWFybHlGdWxsXCJ9IiwiYyI6InNsYWNrIiwiaWF0IjoxNzk1OTU2MzAwLCJleHAiOjE3OTU5NTk5MDAsInMiOiIwMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc4OWFiY2RlZiIsIm4iOjEyMH0.CPMEM2irSPWbaFyKPtw4owaPLoxKdAKE5MRALH2yiIk';
const LEGACY_CHART =
  'eyJ2IjoxLCJzcGVjIjp7InF1ZXJ5IjoidmxsbTpncHVfY2FjaGVfdXNhZ2VfcGVyY3tpbnN0YW5jZT1cIjEyNy4wLjAuMTo5ODAwXCJ9IiwibGFiZWxzIjp7ImFsZXJ0bmFtZSI6IlZMTE1LVkNhY2hlTmVhcmx5RnVsbCIsImluc3RhbmNlIjoiMTI3LjAuMC4xOjk4MDAifSwidGl0bGUiOiJWTExNS1ZDYWNoZU5lYXJseUZ1bGwgwrcgS1YgY2FjaGUgdXNhZ2UiLCJ1bml0IjoicmF0aW8iLCJmaXJlZEF0IjoxNzk1OTU2MTQzLCJ0aHJlc2hvbGQiOnsib3AiOiI-IiwidmFsdWUiOjAuOTV9fSwiZXhwIjoxNzk1OTU5OTAwfQ.iZB1Ubw0fjzrDKVnJBkDA2wewD2M2d-3owp0zBCQH4E';

describe('signed tokens', () => {
  it('verifies tokens minted before the shared module, and mints the same bytes', () => {
    expect(verifyAckToken(LEGACY_ACK, { current: KEY }, NOW)).toEqual(ackClaims);
    expect(verifyChartToken(LEGACY_CHART, { current: KEY }, NOW)).toEqual({
      spec: chart,
      expiresAt: NOW / 1000 + 3600,
      // A token from before languages: its chart is English.
      locale: 'en',
    });
    expect(signAckToken(ackClaims, { current: KEY })).toBe(LEGACY_ACK);
    expect(signChartToken(chart, NOW / 1000 + 3600, { current: KEY })).toBe(LEGACY_CHART);
  });

  it('keeps the kinds apart: a chart token is never an acknowledgement token, nor the reverse', () => {
    expect(() => verifyAckToken(LEGACY_CHART, { current: KEY }, NOW)).toThrow(/signature does not match/);
    expect(() => verifyChartToken(LEGACY_ACK, { current: KEY }, NOW)).toThrow(/signature does not match/);
    const body = { v: 1, exp: NOW / 1000 + 60 };
    expect(openToken('chart.v1.', signToken('ack.v1.', body, { current: KEY }), { current: KEY }, NOW)).toEqual({
      problem: 'forged',
    });
    expect(openToken('ack.v1.', signToken('ack.v1.', body, { current: KEY }), { current: KEY }, NOW)).toEqual({ body });
  });

  it('opens a signed payload that is not JSON as no body, which the kind calls malformed', () => {
    const payload = Buffer.from('{not json').toString('base64url');
    const token = `${payload}.${createHmac('sha256', KEY.reveal()).update(`ack.v1.${payload}`).digest('base64url')}`;
    expect(openToken('ack.v1.', token, { current: KEY }, NOW)).toEqual({ body: undefined });
    expect(() => verifyAckToken(token, { current: KEY }, NOW)).toThrow(/could not be read/);
  });

  it('maps problems to 4xx statuses', () => {
    expect(TOKEN_PROBLEM_STATUS).toEqual({ malformed: 400, forged: 403, expired: 410, retired: 410 });
  });
});

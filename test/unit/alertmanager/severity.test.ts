/**
 * One severity mapping for every reader of the `severity` label: escalation, PagerDuty, Feishu's header
 * colour, the headline's "most severe" and the storm digest's order all read `Critical`, `CRITICAL`,
 * `page`, `P1`… as critical, and agree with each other on every spelling.
 */
import { describe, expect, it } from 'vitest';
import { SEVERITY_WORDS, severityLevel, severityRank } from '../../../shared/alertmanager/severity.js';
import { escalates } from '../../../shared/escalation/escalates.js';
import { pagerDutySeverity } from '../../../shared/channels/pagerduty/payload.js';
import { headerTemplate } from '../../../shared/channels/feishu/index.js';
import { headline } from '../../../shared/render/content.js';
import { summarize } from '../../../shared/render/digest.js';
import type { EnrichedAlert } from '../../../shared/enrich/types.js';
import type { Notification } from '../../../shared/render/notification.js';

const firing = (severity: string | undefined): EnrichedAlert => ({
  status: 'firing',
  labels: { alertname: 'X', ...(severity !== undefined && { severity }) },
  annotations: {},
  startsAt: '2026-11-29T12:00:00Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: `fp-${severity}`,
  enrichment: { status: 'unavailable', kind: 'unknown', reason: 'test' },
});

const notification = (alerts: EnrichedAlert[]): Notification => ({
  groupKey: 'g',
  receiver: 'r',
  status: 'firing',
  groupLabels: {},
  commonLabels: {},
  commonAnnotations: {},
  externalURL: '',
  truncatedAlerts: 0,
  alerts,
});

describe('severityLevel: the one table', () => {
  it.each([
    ['critical', 'critical'],
    ['Critical', 'critical'],
    ['CRITICAL', 'critical'],
    [' critical ', 'critical'],
    ['page', 'critical'],
    ['P1', 'critical'],
    ['p0', 'critical'],
    ['sev1', 'critical'],
    ['SEV-1', 'critical'],
    ['sev_0', 'critical'],
    ['crit', 'critical'],
    ['fatal', 'critical'],
    ['emergency', 'critical'],
    ['error', 'error'],
    ['High', 'error'],
    ['P2', 'error'],
    ['warning', 'warning'],
    ['WARN', 'warning'],
    ['p3', 'warning'],
    ['info', 'info'],
    ['none', 'info'],
    ['P4', 'info'],
    ['', undefined],
    [undefined, undefined],
    ['bogus', undefined],
    ['critical-ish', undefined],
  ] as const)('%j → %s', (label, level) => {
    expect(severityLevel(label)).toBe(level);
  });

  it('lists every word once, lower-case, under one level', () => {
    const words = Object.values(SEVERITY_WORDS).flat();
    expect(new Set(words).size).toBe(words.length);
    expect(words.every((w) => w === w.toLowerCase() && /^[a-z0-9]+$/.test(w))).toBe(true);
  });

  it('ranks critical > error > warning > info > unknown', () => {
    expect(['P1', 'high', 'Warn', 'low', 'bogus', undefined].map(severityRank)).toEqual([4, 3, 2, 1, 0, 0]);
  });
});

describe('every reader agrees with the table', () => {
  it.each(['critical', 'Critical', 'CRITICAL', 'page', 'P1', 'sev1'])(
    '%s escalates, pages critical, colours red',
    (s) => {
      expect(escalates(firing(s))).toBe(true);
      expect(pagerDutySeverity(s)).toBe('critical');
      expect(headerTemplate('firing', s)).toBe('red');
    },
  );

  it.each(['warning', 'Warning', 'warn', 'P3', 'info', 'bogus', ''])('%s never escalates', (s) => {
    expect(escalates(firing(s))).toBe(false);
  });

  it('colours any spelling of warning orange', () => {
    expect(['Warning', 'WARN', 'p3'].map((s) => headerTemplate('firing', s))).toEqual(['orange', 'orange', 'orange']);
  });

  it('the headline names the most severe spelling as written', () => {
    expect(headline(notification([firing('warning'), firing('P1'), firing('info')])).severity).toBe('P1');
    expect(headline(notification([firing('Warning'), firing('bogus')])).severity).toBe('Warning');
  });

  it('the storm digest orders its severities and top alerts by level, counting labels as written', () => {
    const alerts = [firing('warning'), firing('warning'), firing('CRITICAL'), firing('info')];
    const d = summarize(notification(alerts));
    expect(d.bySeverity.map((c) => c.value)).toEqual(['CRITICAL', 'warning', 'info']);
    expect(d.top[0]!.labels.severity).toBe('CRITICAL');
  });
});

/**
 * Grafana's extra fields come from whoever can post to the webhook (or edit a rule in Grafana): links that
 * are not plain http(s) never become links or images, an over-long value string is cut and its line capped,
 * and a `values` map of the wrong type is refused as a body that is wrong forever.
 */
import { describe, expect, it } from 'vitest';
import { parseWebhookBody, type Alert } from '../../../shared/alertmanager/schema.js';
import { grafanaValuesText, sentByGrafana } from '../../../shared/alertmanager/grafana.js';
import { alertImage, alertLines, alertLinks, MAX_VALUES_CHARS, PLAIN } from '../../../shared/render/content.js';
import { cutAlert, MAX_FIELD_BYTES } from '../../../shared/render/reduce.js';
import type { EnrichedAlert } from '../../../shared/enrich/types.js';

const base: Alert = {
  status: 'firing',
  labels: { alertname: 'X' },
  annotations: {},
  startsAt: '2026-11-29T12:00:00Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: '',
  fingerprint: 'f',
  silenceURL: '',
  dashboardURL: '',
  panelURL: '',
  values: null,
  valueString: '',
};
const enriched = (a: Alert): EnrichedAlert => ({
  ...a,
  enrichment: { status: 'unavailable', kind: 'unknown', reason: 'x' },
});

describe("Grafana's fields, hostile", () => {
  it('links nothing that is not plain http(s): javascript:, data:, credentials', () => {
    const alert = enriched({
      ...base,
      generatorURL: 'JaVaScRiPt:alert(1)',
      silenceURL: 'javascript:alert(1)',
      panelURL: 'https://user:pw@grafana.example.com/d/x',
      imageURL: 'data:image/png;base64,AAAA',
    });
    expect(alertLinks(alert, 'http://grafana.example.com/')).toEqual([]);
    expect(alertImage(alert)).toBeUndefined();
  });

  it('cuts an over-long value string and caps its line', () => {
    const long = `[ ${"var='B' labels={} value=1 ], [ ".repeat(2000)}]`;
    const cut = cutAlert({ ...base, valueString: long }, MAX_FIELD_BYTES);
    expect(cut.cut).toContain('valueString');
    const lines = alertLines(enriched(cut), PLAIN);
    const values = lines.find((l) => l.startsWith('Values: '))!;
    expect(values.length).toBeLessThanOrEqual('Values: '.length + MAX_VALUES_CHARS + 4);
  });

  it('shows values sorted by ref ID, six significant digits', () => {
    expect(grafanaValuesText({ values: { C: 1, B: 0.97312345678, A: 1234567890 } })).toBe(
      'A=1234570000 · B=0.973123 · C=1',
    );
  });

  it('refuses a version-1 body whose values are not numbers (Grafana never sends that): 4xx, not a crash', () => {
    const body = {
      version: '1',
      groupKey: 'g',
      status: 'firing',
      receiver: 'r',
      groupLabels: {},
      commonLabels: {},
      commonAnnotations: {},
      externalURL: '',
      orgId: 1,
      title: '',
      state: 'alerting',
      message: '',
      alerts: [{ ...base, values: { B: 'x' } }],
    };
    const parsed = parseWebhookBody(body);
    expect(parsed.success).toBe(false);
    const ok = parseWebhookBody({ ...body, alerts: [{ ...base, values: { B: 1 } }] });
    expect(ok.success && sentByGrafana(ok.data.alerts[0]!)).toBe(true);
  });
});

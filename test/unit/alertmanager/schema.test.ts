import { describe, expect, it } from 'vitest';
import { alertExpression, hasEnded, webhookSchema } from '../../../shared/alertmanager/schema.js';
import { eventKey } from '../../../shared/store/keys.js';
import { fixture, fixtureText, type FixtureName } from '../../helpers/fixtures.js';

const ALL: FixtureName[] = [
  'firing-kv-cache-critical',
  'firing-queue-backlog-two-models',
  'resolved-queue-backlog-two-models',
  'firing-gpu-memory-leak',
];

describe('webhookSchema', () => {
  it.each(ALL)('accepts the real Alertmanager payload %s unchanged', (name) => {
    const raw = fixture(name);
    expect(webhookSchema.parse(raw)).toEqual(raw);
  });

  it('keeps labels exactly as sent (case, odd names)', () => {
    const raw = fixture('firing-gpu-memory-leak');
    raw.alerts[0]!.labels['Weird.Label'] = 'MiXeD';
    const parsed = webhookSchema.parse(raw);
    expect(parsed.alerts[0]!.labels).toMatchObject({
      Hostname: 'gpu-node-1',
      modelName: 'NVIDIA H100 80GB HBM3',
      'Weird.Label': 'MiXeD',
    });
  });

  it('fills in a missing or empty fingerprint with the one Alertmanager computes, keeps a sent one', () => {
    const raw = fixture('firing-queue-backlog-two-models');
    const sent = raw.alerts.map((a) => a.fingerprint);
    const old = JSON.parse(JSON.stringify(raw)) as { alerts: { fingerprint?: string }[] };
    delete old.alerts[0]!.fingerprint;
    old.alerts[1]!.fingerprint = '';
    expect(webhookSchema.parse(old).alerts.map((a) => a.fingerprint)).toEqual(sent);
    raw.alerts[0]!.fingerprint = 'from-a-compatible-sender';
    expect(webhookSchema.parse(raw).alerts[0]!.fingerprint).toBe('from-a-compatible-sender');
  });

  it('keeps a label or annotation named __proto__ as an ordinary entry', () => {
    const raw = JSON.parse(
      fixtureText('firing-kv-cache-critical')
        .replace('"labels": {', '"labels": {"__proto__": "p",')
        .replace('"annotations": {', '"annotations": {"__proto__": "q",'),
    );
    const alert = webhookSchema.parse(raw).alerts[0]!;
    expect(Object.getOwnPropertyDescriptor(alert.labels, '__proto__')?.value).toBe('p');
    expect(Object.getOwnPropertyDescriptor(alert.annotations, '__proto__')?.value).toBe('q');
    expect(Object.getPrototypeOf(alert.labels)).toBe(Object.prototype);
  });

  it('names the path of a label value that is not a string', () => {
    const raw = fixture('firing-kv-cache-critical') as unknown as { alerts: { labels: Record<string, unknown> }[] };
    raw.alerts[0]!.labels.severity = 2;
    expect(webhookSchema.safeParse(raw).error!.issues.map((i) => i.path.join('.'))).toEqual([
      'alerts.0.labels.severity',
    ]);
  });

  it('drops unknown fields instead of rejecting them', () => {
    const parsed = webhookSchema.parse({ ...fixture('firing-kv-cache-critical'), newField: 1 });
    expect(parsed).not.toHaveProperty('newField');
  });

  it('fills in what older or compatible senders leave out: annotations {}, generatorURL "", truncatedAlerts 0', () => {
    const raw = fixture('firing-kv-cache-critical') as unknown as Record<string, unknown> & {
      alerts: Record<string, unknown>[];
    };
    delete raw.truncatedAlerts;
    delete raw.alerts[0]!.annotations;
    delete raw.alerts[0]!.generatorURL;
    const parsed = webhookSchema.parse(raw);
    expect(parsed.truncatedAlerts).toBe(0);
    expect(parsed.alerts[0]!.annotations).toEqual({});
    expect(parsed.alerts[0]!.generatorURL).toBe('');
  });

  it('drops unknown fields of an alert too', () => {
    const raw = fixture('firing-kv-cache-critical');
    const parsed = webhookSchema.parse({ ...raw, alerts: [{ ...raw.alerts[0]!, silencedBy: ['x'] }] });
    expect(Object.keys(parsed.alerts[0]!).sort()).toEqual([
      'annotations',
      'endsAt',
      'fingerprint',
      'generatorURL',
      'labels',
      'startsAt',
      'status',
    ]);
  });

  // The 400 answer and its error log quote these words: zod/mini has none of its own (`shared/core/zod.ts` loads English).
  it("explains each rejected field in zod's English words", () => {
    const raw = fixture('firing-queue-backlog-two-models') as unknown as Record<string, any>;
    raw.version = '3';
    raw.truncatedAlerts = 1.5;
    raw.groupLabels = { a: 1 };
    raw.alerts[0].status = 'pending';
    raw.alerts[0].annotations = [];
    delete raw.alerts[1].startsAt;
    const issues = (input: unknown) =>
      webhookSchema.safeParse(input).error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues(raw)).toEqual([
      'version: Invalid input: expected "4"',
      'truncatedAlerts: Invalid input: expected int, received number',
      'groupLabels.a: Invalid input: expected string, received number',
      'alerts.0.status: Invalid option: expected one of "firing"|"resolved"',
      'alerts.0.annotations: Invalid input: expected record, received array',
      'alerts.1.startsAt: Invalid input: expected string, received undefined',
    ]);
    expect(issues({ ...fixture('firing-kv-cache-critical'), truncatedAlerts: -1, alerts: [] })).toEqual([
      'truncatedAlerts: Too small: expected number to be >=0',
      'alerts: Too small: expected array to have >=1 items',
    ]);
  });

  it('rejects an empty alert list and a bad timestamp, naming the path', () => {
    const raw = fixture('firing-kv-cache-critical');
    raw.alerts[0]!.startsAt = 'yesterday';
    const issues = webhookSchema.safeParse(raw).error!.issues;
    expect(issues.map((i) => i.path.join('.'))).toEqual(['alerts.0.startsAt']);
    expect(webhookSchema.safeParse({ ...raw, alerts: [] }).error!.issues[0]!.path).toEqual(['alerts']);
  });
});

describe('alert helpers', () => {
  it('reads "not ended" from the Go zero time', () => {
    expect(hasEnded(fixture('firing-kv-cache-critical').alerts[0]!)).toBe(false);
    expect(hasEnded(fixture('resolved-queue-backlog-two-models').alerts[0]!)).toBe(true);
  });

  it('reads the rule expression from generatorURL', () => {
    expect(alertExpression(fixture('firing-queue-backlog-two-models').alerts[0]!)).toBe(
      'sum by (model_name) (vllm:num_requests_waiting) > 50',
    );
    expect(alertExpression({ generatorURL: '' })).toBeUndefined();
    expect(alertExpression({ generatorURL: 'not a url' })).toBeUndefined();
  });
});

describe('eventKey', () => {
  const alert = fixture('firing-queue-backlog-two-models').alerts[0]!;

  it('is fingerprint, startsAt and status — nothing about the request or group', () => {
    expect(eventKey(alert)).toBe('event#c10780c1bb3d6376#2026-11-29T12:42:23.143Z#firing');
    const changed = { ...alert, labels: {}, annotations: { summary: 'changed' } };
    expect(eventKey(changed)).toBe(eventKey(alert));
  });

  it('separates firing from resolved, and a new firing episode from the old one', () => {
    expect(eventKey({ ...alert, status: 'resolved' })).not.toBe(eventKey(alert));
    expect(eventKey({ ...alert, startsAt: '2026-11-29T13:00:00Z' })).not.toBe(eventKey(alert));
  });

  it('normalises timestamp precision', () => {
    expect(eventKey({ ...alert, startsAt: '2026-11-29T12:42:23.143000000Z' })).toBe(eventKey(alert));
  });
});

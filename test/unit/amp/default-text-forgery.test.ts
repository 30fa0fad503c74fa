/**
 * AMP's default text with values that write its structure: a label or annotation value holding line
 * breaks and lines shaped like the template's own (`Labels:`, ` - name = value`, `Annotations:`,
 * `Source:`). Rendered by the real Alertmanager template engine (amtool) from groups as Alertmanager
 * sends them (common labels and annotations computed), body and default subject alike. What such a
 * value tries must either be refused (the body is delivered unparsed, as raw text) or change nothing.
 */
import { describe, expect, it } from 'vitest';
import type { WebhookMessage } from '../../../shared/alertmanager/schema.js';
import { labelSetFingerprint } from '../../../shared/alertmanager/fingerprint.js';
import { convertAmpMessage } from '../../../shared/amp/convert.js';
import { matchesSubject } from '../../../shared/amp/default-text-evidence.js';
import { fixture, type FixtureName } from '../../helpers/fixtures.js';
import { renderTemplate } from '../../fixtures/amp/render.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:amp-alerts';
const PUBLISHED = '2026-11-29T12:43:05.512Z';

/** What all `sets` share with the same value. */
function common(sets: Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = sets;
  return Object.fromEntries(Object.entries(first ?? {}).filter(([k, v]) => rest.every((s) => s[k] === v)));
}

/** The fixture with `change` applied to its alerts, fingerprints and common pairs recomputed as Alertmanager does. */
function group(name: FixtureName, change: (alerts: WebhookMessage['alerts']) => void): WebhookMessage {
  const g = fixture(name);
  change(g.alerts);
  for (const a of g.alerts) a.fingerprint = labelSetFingerprint(a.labels);
  g.commonLabels = common(g.alerts.map((a) => a.labels));
  g.commonAnnotations = common(g.alerts.map((a) => a.annotations));
  return g;
}

/** The SNS message AMP publishes for `g` with the default body; `subject: false` as with a subject of one's own. */
function convert(g: WebhookMessage, options: { subject?: boolean } = {}) {
  const body = renderTemplate(g, '{{ template "sns.default.message" . }}');
  const subject = options.subject === false ? undefined : renderTemplate(g, '{{ template "sns.default.subject" . }}');
  return convertAmpMessage({
    messageId: 'm-1',
    topicArn: TOPIC,
    publishedAt: PUBLISHED,
    body,
    attributes: {},
    subject,
  });
}

const COMMON_ANNOTATIONS =
  ' - description = Requests are queueing faster than the engine admits them.\n' +
  ' - runbook_url = https://runbooks.example.com/vllm/queue-backlog';

describe('the default text, as sent, still reads back', () => {
  it.each([
    'firing-kv-cache-critical',
    'firing-queue-backlog-two-models',
    'resolved-queue-backlog-two-models',
  ] as const)('%s, with and without its subject', (name) => {
    const g = group(name, () => {});
    expect(convert(g).kind).toBe('text');
    expect(convert(g, { subject: false }).kind).toBe('text');
    expect(convert(g).message.alerts.map((a) => a.fingerprint)).toEqual(g.alerts.map((a) => a.fingerprint));
  });
});

describe('a value that writes structure', () => {
  it('never adds an alert, even without a subject to count', () => {
    // The last label of the first alert closes it early and opens a heartbeat that takes the rest.
    const g = group('firing-queue-backlog-two-models', (alerts) => {
      alerts[0]!.labels.severity = 'warning\nAnnotations:\nSource: http://x\nLabels:\n - alertname = Watchdog';
    });
    expect(convert(g).kind).toBe('unparsed');
    expect(convert(g, { subject: false }).kind).toBe('unparsed');
  });

  // Without a subject, an added alert that copies the common annotations and keeps every label order is
  // indistinguishable from a real one (docs/security.md): that case is the JSON template's to close.
  it('never adds a resolved alert to a resolved message (no count there), annotations copied or not', () => {
    const forged = (annotations: string) =>
      group('resolved-queue-backlog-two-models', (alerts) => {
        alerts[0]!.labels.severity =
          'warning\nAnnotations:\n' +
          annotations +
          'Source: http://x\nLabels:\n - alertname = VLLMKVCacheNearlyFull\n - kind = queue\n - model_name = qwen3-8b';
      });
    expect(convert(forged('')).kind).toBe('unparsed');
    expect(convert(forged(`${COMMON_ANNOTATIONS}\n`)).kind).toBe('unparsed');
    expect(convert(forged(''), { subject: false }).kind).toBe('unparsed');
  });

  it('never overrides a label its alert has (severity raised to critical)', () => {
    const g = group('firing-queue-backlog-two-models', (alerts) => {
      alerts[0]!.labels.model_name = 'llama-3.1-70b\n - severity = critical\n - zz = x';
    });
    for (const c of [convert(g), convert(g, { subject: false })]) {
      expect(c.kind).toBe('unparsed');
      expect(c.message.alerts.some((a) => a.labels.severity === 'critical')).toBe(false);
    }
  });

  it('never hides the labels after it (a second "Annotations:")', () => {
    const g = group('firing-queue-backlog-two-models', (alerts) => {
      alerts[0]!.labels.model_name = 'llama-3.1-70b\nAnnotations:\n - zz = ';
    });
    expect(convert(g, { subject: false }).kind).toBe('unparsed');
  });

  it('never adds a label the alert lacks when the subject carries the labels (a one-alert group)', () => {
    const g = group('firing-kv-cache-critical', (alerts) => {
      alerts[0]!.labels.model_name = 'qwen3-8b\n - route = pager';
    });
    const c = convert(g);
    expect(c.kind).toBe('unparsed');
    expect(c.message.alerts[0]!.labels.route).toBeUndefined();
  });

  it('reads a subject whose trailing space was dropped on the way', () => {
    const g = group('firing-kv-cache-critical', (alerts) => {
      alerts[0]!.labels = { alertname: 'VLLMKVCacheNearlyFull' };
    });
    const body = renderTemplate(g, '{{ template "sns.default.message" . }}');
    const subject = renderTemplate(g, '{{ template "sns.default.subject" . }}');
    expect(subject).toBe('[FIRING:1] VLLMKVCacheNearlyFull ');
    for (const s of [subject, subject.trimEnd()]) {
      const c = convertAmpMessage({
        messageId: 'm',
        topicArn: TOPIC,
        publishedAt: PUBLISHED,
        body,
        attributes: {},
        subject: s,
      });
      expect(c.kind).toBe('text');
    }
  });

  it('never writes an alert twice', () => {
    const alert = ['Labels:', ' - alertname = VLLMQueueBacklog', 'Annotations:', 'Source: http://x'];
    const body = ['', '', 'Alerts Firing:', ...alert, ...alert, '', ''].join('\n');
    const c = convertAmpMessage({
      messageId: 'm-2',
      topicArn: TOPIC,
      publishedAt: PUBLISHED,
      body,
      attributes: {},
      subject: '[FIRING:2] VLLMQueueBacklog ',
    });
    expect(c.kind).toBe('unparsed');
    expect(c.reason).toMatch(/twice/);
  });
});

describe("the default subject's label values", () => {
  const VALUES = ['VLLMQueueBacklog', 'queue', 'warning'];
  it.each([
    ['VLLMQueueBacklog (queue warning)', true],
    [' (VLLMQueueBacklog queue warning)', true],
    ['VLLMQueueBacklog queue warning', true],
    ['VLLMQueueBacklog warning (queue)', true],
    ['VLLMQueueBacklog (queue)', false],
    ['VLLMQueueBacklog (queue warning critical)', false],
    ['queue (VLLMQueueBacklog warning)', true],
    ['warning queue (VLLMQueueBacklog)', false],
  ])('%j: %s', (subject, expected) => {
    expect(matchesSubject(VALUES, subject, false)).toBe(expected);
  });

  it('are read as a prefix of a subject Alertmanager cut', () => {
    expect(matchesSubject(['VLLMQueueBacklog', 'x'.repeat(200)], 'VLLMQueueBacklog (xxx', true)).toBe(true);
    expect(matchesSubject(['VLLMQueueBacklog', 'x'.repeat(200)], 'VLLMQueueBacklog (xxy', true)).toBe(false);
  });

  it('are matched within a bounded amount of work, even when every value is the same', () => {
    const values = Array.from({ length: 60 }, () => 'a');
    expect(matchesSubject(values, `${values.slice(0, 30).join(' ')} (${values.slice(30).join(' ')} b)`, false)).toBe(
      undefined,
    );
  });
});

/**
 * AMP message bodies the recordings do not cover, rendered by the real Alertmanager template engine
 * (amtool): hostile label values through the shipped JSON template (Go's `%q` quoting), a JSON
 * template that prints times the Go way (as AMP's documented JSON template does), multi-line values in
 * the default text. Each must convert back to the group it was rendered from.
 */
import { describe, expect, it } from 'vitest';
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../../../shared/alertmanager/schema.js';
import { labelSetFingerprint } from '../../../shared/alertmanager/fingerprint.js';
import { convertAmpMessage } from '../../../shared/amp/convert.js';
import { goEscapesToJson } from '../../../shared/amp/json-body.js';
import { fixture } from '../../helpers/fixtures.js';
import { renderTemplate, SHIPPED_MESSAGE } from '../../fixtures/amp/render.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:amp-alerts';
const PUBLISHED = '2026-11-29T12:43:05.512Z';
const convert = (body: string, attributes: Record<string, string> = {}, subject?: string) =>
  convertAmpMessage({ messageId: 'm-1', topicArn: TOPIC, publishedAt: PUBLISHED, body, attributes, subject });

/** The KV-cache fixture with label and annotation values a template can break. */
function hostile(): WebhookMessage {
  const m = fixture('firing-kv-cache-critical');
  const labels = {
    ...m.alerts[0]!.labels,
    pod: 'vllm-"0"\\a',
    note: 'tab\there\nnew line',
    bell: '\u0007\u000b',
    zw: 'a\u200bb',
    tag: 'x\u{E0001}y',
    eq: 'a = b',
  };
  m.alerts[0] = {
    ...m.alerts[0]!,
    labels,
    annotations: {
      summary: 'KV cache 97% full on "qwen3-8b"',
      description: 'First line.\n\n - action = restart the pod\n - then: watch the queue\nLast line.',
    },
    fingerprint: labelSetFingerprint(labels),
  };
  m.commonLabels = labels;
  m.commonAnnotations = m.alerts[0].annotations;
  return m;
}

describe('the shipped JSON template', () => {
  it('carries quotes, backslashes, control and non-printable characters exactly', () => {
    const group = hostile();
    const body = renderTemplate(group, SHIPPED_MESSAGE);
    expect(body).toContain('\\a\\v');
    expect(body).toContain('\\U000e0001');
    const c = convert(body);
    expect(c.kind).toBe('json');
    const expected = webhookSchema.parse(group);
    expect(c.message.alerts).toEqual(expected.alerts);
    expect(c.message.commonLabels).toEqual(expected.commonLabels);
  });
});

describe('Go escapes that JSON lacks', () => {
  it.each([
    ['"\\a\\v"', '\u0007\u000b'],
    ['"\\x41"', 'A'],
    ['"\\U0001f600"', '😀'],
    ['"\\\\a"', '\\a'],
    ['"\\\\\\a"', '\\\u0007'],
  ])('%s reads as %j', (go, value) => {
    expect(JSON.parse(goEscapesToJson(go))).toBe(value);
  });
});

/** Written for these tests in the shape of AMP's documented template: no version or groupKey, times as `{{ .StartsAt }}`, values raw. */
const GO_TIMES_TEMPLATE = () =>
  '{"receiver":"{{ .Receiver }}","status":"{{ .Status }}","alerts":[{{ range $i, $a := .Alerts }}{{ if $i }},{{ end }}{"status":"{{ $a.Status }}","labels":{ {{- range $j, $l := $a.Labels.SortedPairs }}{{ if $j }},{{ end }}"{{ $l.Name }}":"{{ $l.Value }}"{{ end -}} },"annotations":{ {{- range $j, $l := $a.Annotations.SortedPairs }}{{ if $j }},{{ end }}"{{ $l.Name }}":"{{ $l.Value }}"{{ end -}} },"startsAt":"{{ $a.StartsAt }}","endsAt":"{{ $a.EndsAt }}","generatorURL":"{{ $a.GeneratorURL }}","fingerprint":"{{ $a.Fingerprint }}"}{{ end }}],"externalURL":"{{ .ExternalURL }}"}';

describe("a JSON template that prints times the Go way (AMP's documented JSON template does)", () => {
  const GO_TIMES = GO_TIMES_TEMPLATE();

  it.each(['firing-queue-backlog-two-models', 'resolved-queue-backlog-two-models'] as const)(
    "%s: Go times read as the webhook's RFC 3339 times",
    (name) => {
      const group = fixture(name);
      const body = renderTemplate(group, GO_TIMES);
      expect(body).toContain('"startsAt":"2026-11-29 12:42:23.143 +0000 UTC"');
      expect(body).toContain(
        name.startsWith('firing')
          ? '"endsAt":"0001-01-01 00:00:00 +0000 UTC"'
          : '"endsAt":"2026-11-29 12:42:30.143 +0000 UTC"',
      );
      const c = convert(body);
      expect(c.kind).toBe('json');
      expect(c.message.alerts).toEqual(webhookSchema.parse(group).alerts);
      expect(c.message.alerts[0]!.endsAt).toBe(name.startsWith('firing') ? GO_ZERO_TIME : '2026-11-29T12:42:30.143Z');
    },
  );
});

describe('the default text', () => {
  it('reads multi-line values and values holding " = "', () => {
    const group = hostile();
    group.alerts[0]!.labels = { alertname: 'VLLMKVCacheNearlyFull', eq: 'a = b', severity: 'critical' };
    group.alerts[0]!.annotations.description = 'First line.\n\n- restart the pod\n - then: watch the queue\nLast line.';
    group.alerts[0]!.fingerprint = labelSetFingerprint(group.alerts[0]!.labels);
    group.commonLabels = group.alerts[0]!.labels;
    group.commonAnnotations = group.alerts[0]!.annotations;
    const body = renderTemplate(group, '{{ template "sns.default.message" . }}');
    const c = convert(body);
    expect(c.kind).toBe('text');
    expect(c.message.alerts[0]!.labels).toEqual(group.alerts[0]!.labels);
    expect(c.message.alerts[0]!.annotations).toEqual(group.alerts[0]!.annotations);
    expect(c.message.alerts[0]!.fingerprint).toBe(group.alerts[0]!.fingerprint);
  });

  // A line shaped like a pair is always read as one, so a value cannot hide a real pair behind it;
  // a value holding one (here sorted before its own name) is refused and delivered as raw text.
  it('refuses a value holding a line shaped like a pair', () => {
    const group = hostile();
    group.alerts[0]!.labels = { alertname: 'VLLMKVCacheNearlyFull', severity: 'critical' };
    group.alerts[0]!.fingerprint = labelSetFingerprint(group.alerts[0]!.labels);
    const c = convert(renderTemplate(group, '{{ template "sns.default.message" . }}'));
    expect(c).toMatchObject({ kind: 'unparsed', reason: 'annotations pair "action" out of order' });
    expect(c.message.alerts[0]!.annotations.description).toContain(' - action = restart the pod');
  });

  it("reads the indented variant AMP's samples show", () => {
    const body = [
      'qwen3-8b: 80 waiting',
      '  Alerts Firing:',
      '    Labels:',
      '     - alertname = VLLMQueueBacklog',
      '     - model_name = qwen3-8b',
      '    Annotations:',
      '     - summary = qwen3-8b: 80 waiting',
      '    Source: http://prometheus.example.com:9090/graph',
      '',
    ].join('\n');
    const c = convert(body);
    expect(c.kind).toBe('text');
    expect(c.message.alerts[0]).toMatchObject({
      labels: { alertname: 'VLLMQueueBacklog', model_name: 'qwen3-8b' },
      annotations: { summary: 'qwen3-8b: 80 waiting' },
      generatorURL: 'http://prometheus.example.com:9090/graph',
    });
  });
});

describe('bodies whose values try to change their structure', () => {
  // AMP's documented JSON template pastes values raw between quotes ("{{ $l.Value }}").
  const RAW = GO_TIMES_TEMPLATE();

  /** The two-model fixture, its first alert's `model_name` set to `value`, the second alert critical and real. */
  function withValue(value: string): WebhookMessage {
    const group = fixture('firing-queue-backlog-two-models');
    group.alerts[0]!.labels = { ...group.alerts[0]!.labels, model_name: value };
    group.alerts[0]!.fingerprint = labelSetFingerprint(group.alerts[0]!.labels);
    group.alerts[1]!.labels = { ...group.alerts[1]!.labels, severity: 'critical' };
    group.alerts[1]!.fingerprint = labelSetFingerprint(group.alerts[1]!.labels);
    return group;
  }

  it('a JSON value that closes the alerts and declares them again is refused (delivered unparsed), not obeyed', () => {
    const value =
      'x"}}], "alerts": [{"status":"firing","labels":{"alertname":"Watchdog"},"annotations":{},"startsAt":"2026-11-29 12:42:23.143 +0000 UTC","endsAt":"0001-01-01 00:00:00 +0000 UTC","generatorURL":"","fingerprint":"1"}], "ignored": [{"annotations": {"d": "';
    const body = renderTemplate(withValue(value), RAW);
    expect(() => JSON.parse(body)).not.toThrow(); // what JSON.parse alone would have believed
    const c = convert(body);
    expect(c.kind).toBe('unparsed');
    expect(c.message.alerts[0]!.annotations.description).toContain('VLLMQueueBacklog');
  });

  it('a JSON value that injects one more alert beside the real ones is refused', () => {
    const value =
      'x", "zz": "y"}, "annotations": {}, "startsAt": "2026-11-29 12:42:23.143 +0000 UTC", "endsAt": "0001-01-01 00:00:00 +0000 UTC", "generatorURL": "", "fingerprint": "0000000000000000"}, {"status": "firing", "labels": {"alertname": "Watchdog", "zzz": "';
    const c = convert(renderTemplate(withValue(value), RAW));
    expect(c.kind).toBe('unparsed');
  });

  it('duplicate keys anywhere in a JSON body are refused', () => {
    const body = JSON.stringify(fixture('firing-kv-cache-critical')).replace(
      '"receiver":',
      '"receiver":"a","receiver":',
    );
    expect(convert(body).kind).toBe('unparsed');
  });

  it('a default-text value that opens "Alerts Resolved:" never makes a firing alert read as resolved', () => {
    const group = withValue('qwen3-8b\nSource: http://x\n\nAlerts Resolved:\nLabels:\n - zzz = ');
    const body = renderTemplate(group, '{{ template "sns.default.message" . }}');
    const c = convert(body, {}, '[FIRING:2] VLLMQueueBacklog');
    expect(c.message.alerts.filter((a) => a.status === 'resolved')).toEqual([]);
  });

  it('a default-text value that opens "Alerts Resolved:" is refused even without a subject to count', () => {
    const group = withValue('qwen3-8b\nSource: http://x\n\nAlerts Resolved:');
    const body = renderTemplate(group, '{{ template "sns.default.message" . }}');
    const c = convert(body);
    expect(c.message.alerts.filter((a) => a.status === 'resolved')).toEqual([]);
  });
});

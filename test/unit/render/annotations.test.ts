/**
 * Rule sets that carry their text in `message` (the older kubernetes-mixin, node_exporter's mixin and
 * many forks) reach every channel with that text, not as the bare alert name; `summary`, `description`
 * and `message` each show once, in the places docs/messages.md names.
 */
import { describe, expect, it } from 'vitest';
import { renderSlack } from '../../../shared/channels/slack/index.js';
import { renderFeishu } from '../../../shared/channels/feishu/index.js';
import { renderSns, smsText } from '../../../shared/channels/sns/message.js';
import { renderPagerDuty } from '../../../shared/channels/pagerduty/render.js';
import { renderText } from '../../../shared/render/text.js';
import { alertText, alertTitle } from '../../../shared/render/content.js';
import type { EnrichedAlert } from '../../../shared/enrich/types.js';
import type { Notification } from '../../../shared/render/notification.js';

const MESSAGE = 'Pod monitoring/vllm-0 (vllm) is restarting 1.20 times / 10 minutes.';

function notification(annotations: Record<string, string>): Notification {
  const alert: EnrichedAlert = {
    status: 'firing',
    labels: { alertname: 'KubePodCrashLooping', severity: 'warning', namespace: 'monitoring', pod: 'vllm-0' },
    annotations,
    startsAt: '2026-11-29T12:00:00Z',
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: '',
    fingerprint: '1c8e1f8b9c2d3e4f',
    enrichment: { status: 'unavailable', kind: 'unknown', reason: 'no rule for this alert' },
  };
  return {
    groupKey: '{}:{alertname="KubePodCrashLooping"}',
    receiver: 'llm',
    status: 'firing',
    groupLabels: { alertname: 'KubePodCrashLooping' },
    commonLabels: alert.labels,
    commonAnnotations: annotations,
    externalURL: '',
    truncatedAlerts: 0,
    alerts: [alert],
  };
}

const kubernetesMixin = notification({
  message: MESSAGE,
  runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
});

describe('a rule with only `message` (kubernetes-mixin before 0.9)', () => {
  it('Slack shows the message', () => {
    expect(JSON.stringify(renderSlack(kubernetesMixin).blocks)).toContain('is restarting 1.20 times');
  });

  it('Feishu shows the message', () => {
    expect(JSON.stringify(renderFeishu(kubernetesMixin, { locale: 'en' }).card)).toContain('is restarting 1.20 times');
  });

  it('SNS shows the message in the text and in the SMS', () => {
    expect(renderSns(kubernetesMixin, 'arn:aws:sns:eu-west-1:123456789012:t').Message).toContain(MESSAGE);
    expect(smsText(kubernetesMixin)).toContain('Pod monitoring/vllm-0 (vllm) is restarting');
  });

  it("PagerDuty's summary says it, and its details carry it", () => {
    const [event] = renderPagerDuty(kubernetesMixin);
    expect(event).toMatchObject({
      payload: { summary: `KubePodCrashLooping: ${MESSAGE}` },
    });
    expect(JSON.stringify(event)).toContain('"message":');
  });

  it('the title is its first line; the text is not repeated under it', () => {
    const a = kubernetesMixin.alerts[0]!;
    expect(alertTitle(a)).toBe(MESSAGE);
    expect(alertText(a)).toBe('');
    expect(renderText(kubernetesMixin).split(MESSAGE)).toHaveLength(2);
  });
});

describe('summary, description and message together', () => {
  const all = notification({
    summary: 'vllm-0 is crash looping',
    description: 'Restarted 3 times.',
    message: 'OOMKilled.',
  });

  it('title from summary; description, then message, under it in every channel', () => {
    const a = all.alerts[0]!;
    expect(alertTitle(a)).toBe('vllm-0 is crash looping');
    expect(alertText(a)).toBe('Restarted 3 times.\nOOMKilled.');
    for (const text of [
      JSON.stringify(renderSlack(all).blocks),
      JSON.stringify(renderFeishu(all, { locale: 'en' }).card),
      renderText(all),
    ])
      expect(text).toMatch(/Restarted 3 times\.\\?n?[\s\S]*OOMKilled\./);
  });

  it('a message that repeats the description or summary shows once', () => {
    const twice = notification({ summary: 'S', description: 'Same text.', message: 'Same text.' }).alerts[0]!;
    expect(alertText(twice)).toBe('Same text.');
    const asSummary = notification({ summary: 'Same.', message: 'Same.' }).alerts[0]!;
    expect(alertText(asSummary)).toBe('');
  });

  it('a multi-line message titles with its first line and shows whole under it', () => {
    const a = notification({ message: 'Disk almost full.\nOnly 3% left on /var.' }).alerts[0]!;
    expect(alertTitle(a)).toBe('Disk almost full.');
    expect(alertText(a)).toBe('Disk almost full.\nOnly 3% left on /var.');
  });
});

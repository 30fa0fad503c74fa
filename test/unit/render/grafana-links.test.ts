/**
 * With `GRAFANA_URL` set, every channel's message links each alert to the dashboard on its model and
 * instance around its start; without it, no message carries such a link.
 */
import { describe, expect, it } from 'vitest';
import { renderFeishu } from '../../../shared/channels/feishu/index.js';
import { renderPagerDuty } from '../../../shared/channels/pagerduty/render.js';
import { renderSlack } from '../../../shared/channels/slack/index.js';
import { renderSns } from '../../../shared/channels/sns/index.js';
import { alertLinks } from '../../../shared/render/content.js';
import type { Notification } from '../../../shared/render/notification.js';
import { renderText } from '../../../shared/render/text.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const GRAFANA = 'https://grafana.example.com/ops';
const STARTS_AT_MS = Date.parse('2026-11-29T12:42:23.143Z');
const HOUR = 3_600_000;
/** The link of the fixture's KV-cache alert (model qwen3-8b on 127.0.0.1:9800). */
const KV_LINK = `${GRAFANA}/d/vllm-fleet/vllm-fleet?var-model=qwen3-8b&var-instance=127.0.0.1%3A9800&from=${STARTS_AT_MS - HOUR}&to=${STARTS_AT_MS + HOUR}`;

const withGrafana = (n: Notification): Notification => ({ ...n, grafanaUrl: GRAFANA });

describe('the Grafana link in messages', () => {
  it('is one of the alert links, after the Graph, in every channel', () => {
    const n = withGrafana(fixtureNotification('firing-kv-cache-critical'));
    expect(alertLinks(n.alerts[0]!, n.externalURL, n.grafanaUrl).map((l) => l.label)).toEqual([
      'Graph',
      'Grafana',
      'Silence',
    ]);
    expect(alertLinks(n.alerts[0]!, n.externalURL, n.grafanaUrl)[1]!.url).toBe(KV_LINK);
  });

  it('Slack: a link in the alert context line (mrkdwn escapes the &)', () => {
    const json = JSON.stringify(renderSlack(withGrafana(fixtureNotification('firing-kv-cache-critical'))));
    expect(json).toContain(`<${KV_LINK.replaceAll('&', '&amp;')}|Grafana>`);
  });

  it('Feishu: a button, labelled in the locale', () => {
    const n = withGrafana(fixtureNotification('firing-kv-cache-critical'));
    const json = JSON.stringify(renderFeishu(n, { locale: 'en' }));
    expect(json).toContain(
      JSON.stringify({ tag: 'button', text: { tag: 'plain_text', content: 'Grafana' }, type: 'default', url: KV_LINK }),
    );
    expect(JSON.stringify(renderFeishu(n))).toContain(
      JSON.stringify({
        tag: 'button',
        text: { tag: 'plain_text', content: 'Grafana 看板' },
        type: 'default',
        url: KV_LINK,
      }),
    );
  });

  it('SNS and the console: spelled out on its own line', () => {
    const n = withGrafana(fixtureNotification('firing-kv-cache-critical'));
    expect(renderSns(n, 'arn:aws:sns:eu-west-1:123456789012:llm-alerts').Message).toContain(`\nGrafana: ${KV_LINK}\n`);
    expect(renderText(n)).toContain(`\nGrafana: ${KV_LINK}\n`);
  });

  it('PagerDuty: among the event links', () => {
    const event = renderPagerDuty(withGrafana(fixtureNotification('firing-kv-cache-critical')));
    expect(JSON.stringify(event)).toContain(JSON.stringify({ href: KV_LINK, text: 'Grafana' }));
  });

  it("a GPU alert opens the dashboard on All instances (its instance is dcgm-exporter's)", () => {
    const n = withGrafana(fixtureNotification('firing-gpu-memory-leak'));
    const url = new URL(alertLinks(n.alerts[0]!, n.externalURL, n.grafanaUrl).find((l) => l.label === 'Grafana')!.url);
    expect(url.searchParams.has('var-instance')).toBe(false);
  });

  it('a cut label is left out of the link rather than carried cut', () => {
    const n = withGrafana(fixtureNotification('firing-kv-cache-critical'));
    const alert = { ...n.alerts[0]!, cut: ['labels.model_name'] };
    const url = new URL(alertLinks(alert, n.externalURL, n.grafanaUrl).find((l) => l.label === 'Grafana')!.url);
    expect(url.searchParams.has('var-model')).toBe(false);
    expect(url.searchParams.get('var-instance')).toBe('127.0.0.1:9800');
  });

  it('is absent without GRAFANA_URL', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    expect(alertLinks(n.alerts[0]!, n.externalURL, n.grafanaUrl).map((l) => l.label)).not.toContain('Grafana');
    expect(renderText(n)).not.toContain('Grafana');
    expect(JSON.stringify(renderSlack(n))).not.toContain('Grafana');
  });
});

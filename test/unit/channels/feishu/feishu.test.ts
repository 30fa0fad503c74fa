import { webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  FEISHU_MAX_BODY_BYTES,
  feishuSign,
  headerTemplate,
  renderFeishu,
  type FeishuElement,
} from '../../../../shared/channels/feishu/index.js';
import { fixtureNotification, manyAlertsNotification } from '../../../helpers/notifications.js';

const button = (content: string, url: string) => ({
  tag: 'button',
  text: { tag: 'plain_text', content },
  type: 'default',
  url,
});
const divs = (elements: FeishuElement[]) => elements.flatMap((e) => (e.tag === 'div' ? [e.text.content] : []));

describe('renderFeishu', () => {
  it('renders the critical KV-cache alert exactly, red (locale en)', () => {
    expect(renderFeishu(fixtureNotification('firing-kv-cache-critical'), { locale: 'en' })).toEqual({
      msg_type: 'interactive',
      card: {
        config: { wide_screen_mode: true },
        header: {
          title: { tag: 'plain_text', content: '🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)' },
          template: 'red',
        },
        elements: [
          {
            tag: 'div',
            text: {
              tag: 'plain_text',
              content:
                '🔥 KV cache 97% full on qwen3-8b\n' +
                'model_name: qwen3-8b · instance: 127.0.0.1:9800\n' +
                'KV cache usage: 97.3% · Waiting requests: 12 · Preemptions: 1.2/s · TTFT p95: 850 ms\n' +
                'Started 2026-11-29 12:42:23 UTC',
            },
          },
          {
            tag: 'action',
            actions: [
              button(
                'Graph',
                'http://prometheus.example.com:9090/graph?g0.expr=vllm%3Agpu_cache_usage_perc+%3E+0.95&g0.tab=1',
              ),
              button(
                'Silence',
                'http://alertmanager.example.com:9093/#/silences/new?filter=%7Balertname%3D%22VLLMKVCacheNearlyFull%22%2Cinstance%3D%22127.0.0.1%3A9800%22%2Cjob%3D%22vllm%22%2Ckind%3D%22cache%22%2Cmodel_name%3D%22qwen3-8b%22%2Cseverity%3D%22critical%22%7D',
              ),
            ],
          },
        ],
      },
    });
  });

  it('separates alerts, gives each its buttons and colours warnings orange', () => {
    const { card } = renderFeishu(fixtureNotification('firing-queue-backlog-two-models'), { locale: 'en' });
    expect(card.header.template).toBe('orange');
    expect(card.elements.map((e) => e.tag)).toEqual(['div', 'action', 'hr', 'div', 'action']);
    const actions = card.elements[1]!;
    expect(actions.tag === 'action' && actions.actions.map((a) => a.text.content)).toEqual([
      'Graph',
      'Runbook',
      'Silence',
    ]);
    expect(divs(card.elements)[1]).toContain('\nenrichment unavailable: Prometheus query timed out after 2000 ms\n');
  });

  it('colours resolved green, and anything without a known severity blue', () => {
    expect(renderFeishu(fixtureNotification('resolved-queue-backlog-two-models')).card.header.template).toBe('green');
    expect(headerTemplate('firing', 'info')).toBe('blue');
    expect(headerTemplate('firing', '')).toBe('blue');
    expect(headerTemplate('resolved', 'critical')).toBe('green');
  });

  it('sends alert text as plain_text, as typed: no markup, mention or link', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.annotations.summary = '<at id=all></at> & [co](https://evil.example)';
    expect(divs(renderFeishu(n).card.elements)[0]).toContain('🔥 <at id=all></at> & [co](https://evil.example)\n');
  });

  it('keeps 60 alerts under the body limit, with room for a signature, and counts the rest (digest off)', () => {
    const message = renderFeishu(manyAlertsNotification(60, 3), { locale: 'en', digestAbove: 1000 });
    const bytes = Buffer.byteLength(JSON.stringify({ timestamp: '1764420000', sign: 'x'.repeat(44), ...message }));
    expect(bytes).toBeLessThanOrEqual(FEISHU_MAX_BODY_BYTES);
    const shown = divs(message.card.elements).length;
    expect(shown).toBeGreaterThan(5);
    expect(shown).toBeLessThan(60);
    expect(message.card.elements.at(-1)).toEqual({
      tag: 'note',
      elements: [{ tag: 'plain_text', content: `+${60 - shown} more alerts · +3 not included by Alertmanager` }],
    });
  });

  it('shows as many alerts as fit, by bytes: the next one would pass the limit (ASCII and CJK text)', () => {
    const bytes = (m: unknown) => Buffer.byteLength(JSON.stringify(m));
    const reserve = 128; // the signature's room
    // The first alert grows by strides prime to an alert's size (7 bytes, 5 three-byte characters), so the limit
    // falls at offsets spread over an alert, each 5 to 7 bytes from the next (every offset: 940 renders, ~20 s loaded).
    const pads = [
      ...Array.from({ length: 100 }, (_, i) => 'x'.repeat(7 * i)),
      ...Array.from({ length: 48 }, (_, i) => '告'.repeat(5 * i)),
    ];
    for (const pad of pads) {
      const n = manyAlertsNotification(60, 3);
      n.alerts[0]!.annotations.description = pad;
      const message = renderFeishu(n, { locale: 'en', digestAbove: 1000 });
      const shown = divs(message.card.elements).length;
      expect(bytes(message) + reserve).toBeLessThanOrEqual(FEISHU_MAX_BODY_BYTES);
      // The next alert's elements as the card would show them (after a rule), and the note then one fewer.
      const pair = renderFeishu({ ...n, alerts: [n.alerts[0]!, n.alerts[shown]!] }, { locale: 'en', digestAbove: 1000 })
        .card.elements;
      const next = pair.slice(pair.findIndex((e) => e.tag === 'hr')).filter((e) => e.tag !== 'note');
      const note = {
        tag: 'note',
        elements: [{ tag: 'plain_text', content: `+${59 - shown} more alerts · +3 not included by Alertmanager` }],
      };
      const fuller = {
        ...message,
        card: { ...message.card, elements: [...message.card.elements.slice(0, -1), ...next, note] },
      };
      expect(bytes(fuller) + reserve, `pad ${pad.length} chars, ${shown} shown`).toBeGreaterThan(FEISHU_MAX_BODY_BYTES);
    }
  });
});

describe('renderFeishu in Chinese (the default)', () => {
  it('words the header, times, values legend, links and left-out alerts in zh-CN', () => {
    const { card } = renderFeishu(fixtureNotification('resolved-queue-backlog-two-models'));
    expect(card.header.title.content).toBe('✅ 已恢复 · warning · VLLMQueueBacklog (2)');
    const [first, second] = divs(card.elements);
    expect(first).toContain('开始于 2026-11-29 12:42:23 UTC · 结束于 2026-11-29 12:42:30 UTC');
    expect(second).toContain('\n补充信息不可用：Prometheus query timed out after 2000 ms\n');
    const actions = card.elements[1]!;
    // Resolved: nothing is left to silence.
    expect(actions.tag === 'action' && actions.actions.map((a) => a.text.content)).toEqual([
      'Prometheus 图表',
      '处理手册',
    ]);
    const firing = renderFeishu(fixtureNotification('firing-queue-backlog-two-models')).card.elements[1]!;
    expect(firing.tag === 'action' && firing.actions.map((a) => a.text.content)).toEqual([
      'Prometheus 图表',
      '处理手册',
      '静默',
    ]);
  });

  it('says what was left out in Chinese', () => {
    const { card } = renderFeishu(manyAlertsNotification(60, 3), { digestAbove: 1000 });
    const last = card.elements.at(-1)!;
    expect(last.tag === 'note' && last.elements[0]!.content).toMatch(
      /^另有 \d+ 条告警 · 另有 3 条未被 Alertmanager 包含$/,
    );
  });
});

describe('feishuSign', () => {
  const secret = 'LjbmSWq8bAOb7LxYhzkTMe';
  const timestamp = 1764420000;

  it('matches a vector computed with Python hmac and openssl', () => {
    // python3: base64(hmac.new(b"1764420000\nLjbmSWq8bAOb7LxYhzkTMe", b"", sha256).digest())
    expect(feishuSign(secret, timestamp)).toBe('g8B6Dz6Hz/+gVmCD/PlVIVpQkHYPKFSq76oucNTO/FI=');
  });

  it('matches WebCrypto HMAC over an empty message, keyed with timestamp + "\\n" + secret', async () => {
    const key = await webcrypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(`${timestamp}\n${secret}`),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const mac = Buffer.from(await webcrypto.subtle.sign('HMAC', key, new Uint8Array(0))).toString('base64');
    expect(feishuSign(secret, timestamp)).toBe(mac);
    expect(feishuSign(secret, timestamp + 1)).not.toBe(mac);
  });
});

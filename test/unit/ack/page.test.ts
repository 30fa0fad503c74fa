import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { h } from '../../../shared/ack/escape.js';
import { PAGE_HEADERS, renderAckPage, renderProblemPage } from '../../../shared/ack/page.js';
import { silenceFor } from '../../../shared/alertmanager/silences.js';
import type { AlertRecord } from '../../../shared/store/alert-record.js';
import { fixture } from '../../helpers/fixtures.js';

const NOW = Date.parse('2026-11-29T12:50:23.143Z');

function record(overrides: Partial<AlertRecord> = {}): AlertRecord {
  const alert = fixture('firing-kv-cache-critical').alerts[0]!;
  alert.labels.model_name = '<script>alert(1)</script>';
  alert.annotations.summary = 'KV "cache" & <b>full</b>';
  return {
    fingerprint: alert.fingerprint,
    startsAt: '2026-11-29T12:42:23.143Z',
    status: 'firing',
    alert,
    groupKey: 'g',
    externalURL: '',
    channels: ['slack'],
    notifiedAt: '2026-11-29T12:42:24.000Z',
    ...overrides,
  };
}

describe('acknowledgement page', () => {
  it('escapes every alert value', () => {
    const html = renderAckPage({ alerts: [{ fingerprint: 'f', record: record() }], channel: 'slack<x>', nowMs: NOW });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>full');
    expect(html).toContain('<bdi>model_name</bdi>=<bdi>&lt;script&gt;alert(1)&lt;/script&gt;</bdi>');
    expect(html).toContain('KV &quot;cache&quot; &amp; &lt;b&gt;full&lt;/b&gt;');
    expect(html).toContain('the slack&lt;x&gt; message');
    expect(html).toContain('since 2026-11-29 12:42:23 UTC (8 min)');
    expect(h`<p title="${`'"&<>`}">${`'"&<>`}</p>`.toString()).toBe(
      '<p title="&#39;&quot;&amp;&lt;&gt;">&#39;&quot;&amp;&lt;&gt;</p>',
    );
  });

  it('allows exactly its own stylesheet by hash and nothing else', () => {
    const html = renderAckPage({ alerts: [], channel: 'slack', nowMs: NOW });
    const style = /<style>(.*)<\/style>/s.exec(html)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(PAGE_HEADERS['content-security-policy']).toBe(
      `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    expect(html).not.toMatch(/<script|<img|<link|https?:\/\//);
  });

  it('shows the form only when asked to, and who acknowledged', () => {
    const acked = record({
      acknowledgement: { by: 'alice', at: '2026-11-29T12:45:23.143Z', channel: 'feishu', silenceId: 's-1' },
    });
    const html = renderAckPage({
      alerts: [{ fingerprint: 'f', record: acked }, { fingerprint: 'gone' }],
      channel: 'feishu',
      nowMs: NOW,
    });
    expect(html).not.toContain('<form');
    expect(html).toContain(
      'Acknowledged by <strong><bdi>alice</bdi></strong> at 2026-11-29 12:45:23 UTC (3 min after it fired), from the feishu link · silence <code><bdi>s-1</bdi></code>',
    );
    expect(html).toContain('Alert <bdi>gone</bdi></h2><p class="muted">Unknown here');
    const form = renderAckPage({
      alerts: [{ fingerprint: 'f', record: record() }],
      channel: 'sns',
      nowMs: NOW,
      form: { nonce: { nonce: 'n"1', mac: 'm' }, name: 'bob', silenceHours: [1, 4] },
    });
    expect(form).toContain('<input type="hidden" name="nonce" value="n&quot;1">');
    expect(form).toContain('value="bob"');
    expect(form).toContain('<option value="4">4 hours</option>');
  });

  it('gives hostile text in every field no tag, attribute or link of its own', () => {
    const evil = `"'><script>alert(1)</script><a href="javascript:alert(1)" onclick=x>x</a><img src=x onerror=alert(1)>`;
    const r = record({ acknowledgement: { by: evil, at: '2026-11-29T12:45:23.143Z', channel: evil, silenceId: evil } });
    r.alert.labels = { alertname: evil, severity: evil, [evil]: evil };
    r.alert.annotations = { summary: evil, runbook_url: 'javascript:alert(1)' };
    const html = renderAckPage({
      alerts: [{ fingerprint: evil, record: r }, { fingerprint: evil }],
      channel: evil,
      nowMs: NOW,
      form: { nonce: { nonce: evil, mac: evil }, name: evil, silenceHours: [1] },
      result: {
        alerts: [
          { fingerprint: evil, outcome: 'unknown', silence: { error: evil } },
          { fingerprint: evil, outcome: 'unknown', silence: { id: evil } },
        ],
        followUps: { [evil]: false },
      },
    });
    // Attribute values stay inside their quotes: none holds a raw < or >.
    for (const [, value] of html.matchAll(/="([^"]*)"/g)) expect(value).not.toMatch(/[<>]/);
    // Every tag on the page is one the template writes, with no event handler and no link.
    const markup = html.replace(/"[^"]*"/g, '""');
    const tags = [...markup.matchAll(/<\/?([a-z0-9!]+)/gi)].map((m) => m[1]!.toLowerCase());
    expect(new Set(tags)).toEqual(
      new Set([
        '!doctype',
        'html',
        'head',
        'meta',
        'title',
        'style',
        'body',
        'main',
        'h1',
        'h2',
        'p',
        'section',
        'span',
        'strong',
        'code',
        'bdi',
        'ul',
        'li',
        'form',
        'input',
        'label',
        'select',
        'option',
        'button',
        'a',
      ]),
    );
    expect(markup).not.toMatch(/<[^>]*\s(on[a-z]+|src)=/i);
    // The one link is the rule's graph (the fixture's http generatorURL); the javascript: runbook is not one.
    expect([...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1])).toEqual([h`${r.alert.generatorURL}`.toString()]);
  });

  it('isolates every text from the alert or the person, so a right-to-left override in one value reverses nothing after it', () => {
    const rlo = '\u202Eaxbrp';
    const r = record({
      acknowledgement: { by: rlo, at: '2026-11-29T12:45:23.143Z', channel: 'slack', silenceId: rlo },
    });
    r.alert.labels = { alertname: `KV${rlo}`, a_team: rlo, [`k${rlo}`]: 'v', severity: 'critical' };
    r.alert.annotations = { summary: rlo, description: rlo };
    const other = record({ fingerprint: rlo });
    const html = renderAckPage({
      alerts: [{ fingerprint: 'f', record: r }, { fingerprint: rlo }],
      channel: 'slack',
      nowMs: NOW,
      form: { nonce: { nonce: 'n', mac: 'm' }, name: rlo, silenceHours: [1] },
      result: {
        alerts: [
          { fingerprint: 'f', outcome: 'newer occurrence', record: r },
          { fingerprint: rlo, outcome: 'unknown', silence: { error: rlo } },
          { fingerprint: 'g', outcome: 'acknowledged', record: other, silence: { id: rlo } },
        ],
        followUps: {},
      },
    });
    expect(html).toContain(`<bdi>a_team</bdi>=<bdi>${rlo}</bdi>`);
    // Outside <bdi> (element text) and FSI…PDI (the title and attribute values, which hold no tags), no override is left;
    // the name field's value is the person's own input (an input box reorders only inside itself).
    const outside = html
      .replace(/<bdi>[^<]*<\/bdi>/g, '')
      .replace(/\u2068[^\u2069]*\u2069/g, '')
      .replace(/name="name"[^>]*value="[^"]*"/, '');
    expect(outside).not.toContain('\u202E');
  });

  it("words an 'Acknowledge all' result in the plural and names each alert by alertname and key labels, not by summary alone", () => {
    const at = (instance: string, outcome: 'acknowledged' | 'newer occurrence' | 'already acknowledged') => {
      const r = record();
      r.alert.labels = { ...r.alert.labels, model_name: 'qwen3-8b', instance };
      return { fingerprint: instance, outcome, record: r };
    };
    const alerts = [
      ...Array.from({ length: 17 }, (_, i) => at(`10.0.0.${i}:8000`, 'acknowledged')),
      at('10.0.1.1:8000', 'newer occurrence'),
      at('10.0.1.2:8000', 'newer occurrence'),
      at('10.0.1.3:8000', 'already acknowledged'),
      at('10.0.1.4:8000', 'already acknowledged'),
      at('10.0.1.5:8000', 'already acknowledged'),
    ];
    const html = renderAckPage({ alerts: [], channel: 'slack', nowMs: NOW, result: { alerts, followUps: {} } });
    expect(html).toContain('2 have fired again since this link was sent');
    expect(html).toContain('3 were already acknowledged');
    expect(html).not.toMatch(/\b[2-9] (has|was)\b/);
    const items = [...html.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]!.replace(/<\/?bdi>/g, ''));
    expect(items).toHaveLength(5);
    expect(items[0]).toBe(
      'VLLMKVCacheNearlyFull · model_name: qwen3-8b · instance: 10.0.1.1:8000: has fired again since this link was sent; use the newer message',
    );
    expect(new Set(items).size).toBe(5);
    const one = renderAckPage({
      alerts: [],
      channel: 'slack',
      nowMs: NOW,
      result: { alerts: [at('10.0.1.1:8000', 'already acknowledged')], followUps: {} },
    });
    expect(one).toContain('instance: <bdi>10.0.1.1:8000</bdi>: was already acknowledged');
  });

  it('words refusals plainly', () => {
    expect(renderProblemPage('Link not valid', 'It expired <now>.')).toContain(
      '<h1>Link not valid</h1><section class="error"><p>It expired &lt;now&gt;.</p>',
    );
  });
});

describe('silenceFor', () => {
  it('matches every label with equality, from now for N hours, naming who and which alert', () => {
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const silence = silenceFor(alert, { hours: 4, by: 'alice', nowMs: NOW });
    expect(silence).toEqual({
      matchers: Object.keys(alert.labels)
        .sort()
        .map((name) => ({ name, value: alert.labels[name], isRegex: false, isEqual: true })),
      startsAt: '2026-11-29T12:50:23.143Z',
      endsAt: '2026-11-29T16:50:23.143Z',
      createdBy: 'alice',
      comment: 'Acknowledged by alice via llm-alert-pipeline (alert 936e109b8c52c001)',
    });
  });
});

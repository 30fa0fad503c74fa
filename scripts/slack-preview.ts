/**
 * Draws the README's picture (docs/slack-message.png): the Slack message `renderSlack` builds for a fixture alert (enriched as
 * the unit tests enrich it, likely cause from the shipped rules), laid out the way Slack shows Block
 * Kit (header, mrkdwn sections, the chart image, context line) and screenshotted by Debian's Chromium.
 * The chart is the real renderer's PNG (`shared/chart`) over a fixture series rising through the
 * rule's threshold, served from a file instead of the signed URL.
 * It is our HTML approximating Slack's look, fed with the exact blocks we send; not Slack's renderer.
 * Usage: npx tsx scripts/slack-preview.ts docs/slack-message.png
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { renderSlack, type SlackBlock } from '../shared/channels/slack/index.js';
import { chartData, chartWindow } from '../shared/chart/data.js';
import { renderChartPng } from '../shared/chart/render.js';
import { chartSpec } from '../shared/chart/spec.js';
import type { Point } from '../shared/prometheus/client.js';
import { likelyCause } from '../shared/enrich/causes/likely-cause.js';
import { fixtureNotification, KV_CACHE_ENRICHMENT } from '../test/helpers/notifications.js';

const out = resolve(process.argv[2] ?? 'docs/slack-message.png');
const notification = fixtureNotification('firing-kv-cache-critical');
const signals = KV_CACHE_ENRICHMENT.status === 'enriched' ? KV_CACHE_ENRICHMENT.signals : [];
const cause = likelyCause('kv_cache', { signals });
for (const alert of notification.alerts) {
  if (alert.enrichment?.status === 'enriched' && cause) alert.enrichment = { ...alert.enrichment, likelyCause: cause };
}

const dir = mkdtempSync(join(tmpdir(), 'slack-preview-'));
const alert = notification.alerts[0]!;
const spec = chartSpec(alert)!;
const firedAt = spec.firedAt;
const window = chartWindow(spec, firedAt + 1800);
const points: Point[] = [];
for (let t = window.start; t <= window.end; t += window.step)
  points.push({ time: t, value: 0.7 + 0.29 / (1 + Math.exp(-(t - firedAt + 300) / 200)) });
writeFileSync(join(dir, 'chart.png'), await renderChartPng(chartData(spec, [{ metric: {}, points }], window)));
alert.chartUrl = `file://${join(dir, 'chart.png')}`;

// This machine has no colour-emoji font: the status emoji are drawn as small inline SVGs instead.
const EMOJI: Record<string, string> = {
  '🔥': '<svg width="16" height="16" viewBox="0 0 16 16"><path d="M8 1c1 3 5 5 5 9a5 5 0 0 1-10 0c0-2 1-3 2-4 0 2 1 3 2 3-1-3 0-6 1-8z" fill="#e8590c"/><path d="M8 8c1 1 2 2 2 3.5a2 2 0 0 1-4 0C6 10 7 9 8 8z" fill="#ffd43b"/></svg>',
  '✅': '<svg width="16" height="16" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#2f9e44"/><path d="M4 8.5l3 3 5-6" stroke="#fff" stroke-width="2" fill="none"/></svg>',
};
const escapeHtml = (s: string) =>
  s
    .replace(/&(?!amp;|lt;|gt;)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/🔥|✅/g, (e) => EMOJI[e]!);
/** Slack mrkdwn → HTML: `<url|label>` links, `*bold*`, `_italic_`, line breaks. */
function mrkdwn(text: string): string {
  return text
    .split(/(<[^>|]+\|[^>]+>)/)
    .map((part) => {
      const link = /^<([^>|]+)\|([^>]+)>$/.exec(part);
      if (link) return `<a>${escapeHtml(link[2]!)}</a>`;
      return escapeHtml(part)
        .replace(/\*([^*\n]+)\*/g, '<b>$1</b>')
        .replace(/(^|\s)_([^_\n]+)_/g, '$1<i>$2</i>');
    })
    .join('')
    .replace(/\n/g, '<br>');
}

function block(b: SlackBlock): string {
  const any = b as { type: string; text?: { text: string }; elements?: { text?: string }[] };
  if (any.type === 'header') return `<div class="header">${escapeHtml(any.text!.text)}</div>`;
  if (any.type === 'section') return `<div class="section">${mrkdwn(any.text!.text)}</div>`;
  if (any.type === 'context')
    return `<div class="context">${(any.elements ?? []).map((e) => mrkdwn(e.text ?? '')).join(' ')}</div>`;
  if (any.type === 'divider') return '<hr>';
  if (b.type === 'image') return `<img class="image" src="${b.image_url}" alt="${escapeHtml(b.alt_text)}">`;
  return '';
}

const message = renderSlack(notification);
const html = `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#fff;font:15px/1.46668 -apple-system,"Segoe UI",Helvetica,Arial,"Noto Sans","Noto Color Emoji",sans-serif;color:#1d1c1d}
.msg{display:flex;gap:8px;padding:16px 20px;width:760px}
.avatar{width:36px;height:36px;border-radius:4px;background:#4a154b;color:#fff;font-weight:700;display:flex;align-items:center;justify-content:center}
.name{font-weight:900}.app{font-size:10px;background:#e8e8e8;border-radius:2px;padding:1px 3px;margin-left:4px;color:#616061}
.image{display:block;width:560px;border:1px solid #ddd;border-radius:8px;margin:6px 0}.header{font-size:18px;font-weight:900;margin:4px 0 8px}.section{margin:6px 0}.context{font-size:12px;color:#616061;margin-top:6px}
a{color:#1264a3}hr{border:0;border-top:1px solid #ddd}
</style><div class="msg"><div class="avatar">AM</div><div><div><span class="name">llm-alert-pipeline</span><span class="app">APP</span></div>
${message.blocks.map(block).join('\n')}</div></div>`;

writeFileSync(join(dir, 'message.html'), html);
execFileSync(
  '/usr/bin/chromium',
  [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--hide-scrollbars',
    `--screenshot=${out}`,
    '--window-size=800,600',
    `file://${join(dir, 'message.html')}`,
  ],
  {
    stdio: 'ignore',
  },
);
console.log(out);

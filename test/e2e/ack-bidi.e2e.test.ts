/**
 * The acknowledgement page as headless Chromium lays it out, with a right-to-left override (U+202E)
 * in one label value: the labels after it must still read left to right (before the fix Chromium
 * showed `severity=critical` as `lacitirc=ytireves`). Measured on the glyphs, not the markup.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderAckPage } from '../../shared/ack/page.js';
import type { AlertRecord } from '../../shared/store/alert-record.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';
import { fixture } from '../helpers/fixtures.js';

let browser: HeadlessChromium;

beforeAll(async () => {
  browser = await launchChromium('ack-bidi');
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

function hostileRecord(): AlertRecord {
  const alert = fixture('firing-kv-cache-critical').alerts[0]!;
  alert.labels = { alertname: 'VLLMKVCacheNearlyFull', a_team: '\u202Eaxbrp', severity: 'critical' };
  alert.annotations = { summary: '\u202EKV cache full', description: 'see severity' };
  return {
    fingerprint: alert.fingerprint,
    startsAt: alert.startsAt,
    status: 'firing',
    alert,
    groupKey: 'g',
    externalURL: '',
    channels: ['slack'],
    notifiedAt: alert.startsAt,
  };
}

describe('acknowledgement page with a right-to-left override in a label value (Chromium)', () => {
  it('lays out the words after it left to right: the first letter of "severity" and of "critical" left of their last', async () => {
    const page = await browser.newPage();
    await page.setContent(
      renderAckPage({
        alerts: [{ fingerprint: 'f', record: hostileRecord() }],
        channel: 'slack',
        nowMs: Date.parse('2026-11-29T12:50:00Z'),
      }),
    );
    // x of the first and last letter of `word` in the labels line, from the laid-out glyphs.
    // x of the first and last letter of `word` in the labels line, from the laid-out glyphs (a string: the test compiles without DOM types).
    const edges = (word: string) =>
      page.evaluate(`(() => {
        const line = [...document.querySelectorAll('p.muted')].find((p) => p.textContent.includes('a_team'));
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent.indexOf(${JSON.stringify(word)});
          if (at < 0) continue;
          const x = (i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1); return r.getBoundingClientRect().left; };
          return [x(at), x(at + ${word.length} - 1)];
        }
      })()`) as Promise<[number, number] | undefined>;
    for (const word of ['severity', 'critical']) {
      const [first, last] = (await edges(word))!;
      expect(first, word).toBeLessThan(last!);
    }
    await page.close();
  });
});

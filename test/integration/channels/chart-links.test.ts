/**
 * The chart in each channel's message: Slack an image block (Slack fetches the URL itself), Feishu
 * a "Chart" button, SNS/e-mail and the console a `Chart: <url>` line; none without a chart URL; and
 * when Slack refuses the message because it could not fetch the image (`invalid_blocks`), the one
 * resend (the reduced rendering) carries no image, so the alert still arrives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver } from '../../../shared/channels/deliver.js';
import { renderFeishu } from '../../../shared/channels/feishu/index.js';
import {
  createSlackChannel,
  renderSlack,
  SLACK_MAX_ALT_TEXT_CHARS,
  type SlackMessage,
} from '../../../shared/channels/slack/index.js';
import { silentLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import type { Notification } from '../../../shared/render/notification.js';
import { renderText } from '../../../shared/render/text.js';
import { startLoopback, type Loopback } from '../../helpers/loopback.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const CHART = 'https://alerts.example.com/v1/chart/eyJ2IjoxfQ.c2lnbmF0dXJl.png';

function withChart(): Notification {
  const n = fixtureNotification('firing-queue-backlog-two-models');
  return { ...n, alerts: n.alerts.map((a, i) => (i === 0 ? { ...a, chartUrl: CHART } : a)) };
}

describe('chart in messages', () => {
  it('Slack: an image block after the alert it charts, alt text naming it; not repeated as a link', () => {
    const { blocks } = renderSlack(withChart());
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'image', 'context', 'section', 'context']);
    const image = blocks[2]!;
    expect(image).toEqual({ type: 'image', image_url: CHART, alt_text: expect.stringMatching(/^Chart: /) });
    expect((image as { alt_text: string }).alt_text.length).toBeLessThanOrEqual(SLACK_MAX_ALT_TEXT_CHARS);
    expect(JSON.stringify(blocks.filter((b) => b.type === 'context'))).not.toContain('/v1/chart/');
    expect(
      renderSlack(fixtureNotification('firing-queue-backlog-two-models')).blocks.some((b) => b.type === 'image'),
    ).toBe(false);
  });

  it('Feishu: a Chart button; SNS/e-mail text: a Chart line', () => {
    expect(JSON.stringify(renderFeishu(withChart()))).toContain(`"url":"${CHART}"`);
    expect(JSON.stringify(renderFeishu(withChart(), { locale: 'zh-CN' }))).toContain('趋势图');
    expect(renderText(withChart())).toContain(`Chart: ${CHART}`);
    expect(renderText(fixtureNotification('firing-queue-backlog-two-models'))).not.toContain('Chart:');
  });

  describe('Slack refusing the image', () => {
    let slack: Loopback;
    beforeAll(async () => {
      slack = await startLoopback();
    });
    afterAll(() => slack.close());

    it('resends once without the image when Slack answers invalid_blocks', async () => {
      slack.reply({ status: 400, body: 'invalid_blocks' }, { status: 200, body: 'ok' });
      const channel = createSlackChannel({ webhookUrl: new Secret(`${slack.url}/services/T0/B0/x`) });
      const attempts = await deliver(channel, withChart(), {
        timeoutMs: 2000,
        retries: 0,
        budgetMs: 10_000,
        logger: silentLogger,
      });
      expect(attempts).toBe(2);
      const [first, second] = slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackMessage);
      expect(first!.blocks.some((b) => b.type === 'image')).toBe(true);
      expect(second!.blocks.some((b) => b.type === 'image')).toBe(false);
    });
  });
});

/**
 * Alerts from AMP's default SNS text carry no start time (Go's zero time stands in, so the dedupe key
 * stays stable): channels and the acknowledgement page leave the start out instead of showing year 1.
 */
import { describe, expect, it } from 'vitest';
import { GO_ZERO_TIME } from '../../../shared/alertmanager/schema.js';
import { acknowledgementLine, alertLines, PLAIN } from '../../../shared/render/content.js';
import { renderText } from '../../../shared/render/text.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const ACK = { by: 'alice', at: '2026-11-29T12:46:05.000Z', channel: 'slack' };

function unknownStart(name: 'firing-kv-cache-critical' | 'resolved-queue-backlog-two-models') {
  const n = fixtureNotification(name);
  return { ...n, alerts: n.alerts.map((a) => ({ ...a, startsAt: GO_ZERO_TIME })) };
}

describe('an alert whose start is unknown', () => {
  it('shows no start time, and the end time when resolved', () => {
    const firing = alertLines(unknownStart('firing-kv-cache-critical').alerts[0]!, PLAIN);
    expect(firing.join('\n')).not.toMatch(/0001|Started/);
    const resolved = alertLines(unknownStart('resolved-queue-backlog-two-models').alerts[0]!, PLAIN);
    // The time line stands alone (the free-text description comes after the key lines).
    expect(resolved).toContain('Ended 2026-11-29 12:42:30 UTC');
    expect(resolved.join('\n')).not.toMatch(/0001|Started/);
    expect(renderText(unknownStart('firing-kv-cache-critical'))).not.toMatch(/0001|Started/);
  });

  it('says who acknowledged it without a time since it fired', () => {
    const alert = { ...unknownStart('firing-kv-cache-critical').alerts[0]!, acknowledgement: ACK };
    expect(acknowledgementLine(alert, PLAIN)).toBe('👀 Acknowledged by alice at 2026-11-29 12:46:05 UTC');
    expect(acknowledgementLine(alert, PLAIN, 'zh-CN')).toBe('👀 由 alice 于 2026-11-29 12:46:05 UTC 认领');
  });

  it('still shows the start of an alert that has one', () => {
    expect(alertLines(fixtureNotification('firing-kv-cache-critical').alerts[0]!, PLAIN).at(-1)).toBe(
      'Started 2026-11-29 12:42:23 UTC',
    );
  });
});

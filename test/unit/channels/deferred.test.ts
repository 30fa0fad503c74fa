/**
 * Channels whose code loads apart from their settings (`shared/channels/deferred.ts`): loaded once,
 * at start when the entries call `channelsReady`, or by the first send; a failed load is tried again.
 */
import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../shared/channels/channel.js';
import { channelsReady, deferredChannel } from '../../../shared/channels/deferred.js';
import { buildChannels } from '../../../shared/runtime/channels.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import type { Notification } from '../../../shared/render/notification.js';

const NOTIFICATION = {} as Notification;

function counting(fail = 0) {
  const sent: Notification[] = [];
  let loads = 0;
  const channel = deferredChannel('x', async () => {
    if (loads++ < fail) throw new Error('chunk not readable');
    return { name: 'x', send: async (n) => void sent.push(n) } satisfies Channel;
  });
  return { channel, sent, loads: () => loads };
}

describe('deferredChannel', () => {
  it('loads nothing until asked, then once: by channelsReady at start or by the first send', async () => {
    const a = counting();
    expect(a.loads()).toBe(0);
    await channelsReady([a.channel, { name: 'plain', send: async () => undefined }]);
    expect(a.loads()).toBe(1);
    await a.channel.send(NOTIFICATION, AbortSignal.timeout(1000));
    expect(a.sent).toEqual([NOTIFICATION]);
    expect(a.loads()).toBe(1);

    const b = counting();
    await b.channel.send(NOTIFICATION, AbortSignal.timeout(1000));
    expect([b.loads(), b.sent.length]).toEqual([1, 1]);
  });

  it('fails the send when the load fails, and loads again on the next one', async () => {
    const c = counting(1);
    await expect(c.channel.send(NOTIFICATION, AbortSignal.timeout(1000))).rejects.toThrow('chunk not readable');
    await c.channel.send(NOTIFICATION, AbortSignal.timeout(1000));
    expect([c.loads(), c.sent.length]).toEqual([2, 1]);
  });

  it('is how a configured PagerDuty is built, under its ledger name', async () => {
    const config = loadConfig({ PAGERDUTY_ROUTING_KEY: 'e93facc04764012d7bfb002500d5d1a6', HEARTBEAT_ALERTNAME: '' });
    const [pagerduty] = buildChannels(config);
    expect(pagerduty!.name).toBe('pagerduty');
    expect(typeof (pagerduty as Partial<{ ready: unknown }>).ready).toBe('function');
    await channelsReady([pagerduty!]);
  });
});

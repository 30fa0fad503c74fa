/**
 * Which thread each alert of a notification goes to (`partsByThread`): the thread of the group key it
 * was announced under while that thread is open and lists it, else the notification's own group; and the
 * follow-up built from records of several groups names each record's group key.
 */
import { describe, expect, it } from 'vitest';
import { partsByThread } from '../../../shared/channels/thread-parts.js';
import type { ThreadProgress } from '../../../shared/channels/threads.js';
import { noticeFromRecords } from '../../../shared/escalation/notices.js';
import type { Notification } from '../../../shared/render/notification.js';
import type { AlertRecord } from '../../../shared/store/alert-record.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const OLD = '{}:{alertname="VLLMQueueBacklog"}';
const NEW = '{}:{alertname="VLLMQueueBacklog", instance="vllm-0:8000"}';

/** The two-model fixture, resolved, under `NEW`, its alerts announced under `OLD` where `keys` says so. */
function resolvedUnderNew(keys: Record<string, string>): Notification {
  const n = fixtureNotification('resolved-queue-backlog-two-models');
  return { ...n, groupKey: NEW, threadKeys: keys };
}

type Thread = ThreadProgress & { id: string };

describe('partsByThread', () => {
  it('sends an alert to the open thread that lists it, under that thread’s group key', async () => {
    const n = resolvedUnderNew({});
    const [a, b] = n.alerts;
    const threads: Record<string, Thread> = { [OLD]: { id: 'old', firing: [a!.fingerprint, b!.fingerprint] } };
    const parts = await partsByThread(
      { ...n, threadKeys: { [a!.fingerprint]: OLD, [b!.fingerprint]: OLD } },
      async (k) => threads[k],
    );
    expect(parts).toHaveLength(1);
    expect(parts[0]!.thread?.id).toBe('old');
    expect(parts[0]!.notification).toMatchObject({ groupKey: OLD, status: 'resolved', truncatedAlerts: 0 });
    expect(parts[0]!.notification.alerts.map((x) => x.fingerprint)).toEqual([a!.fingerprint, b!.fingerprint]);
    expect(parts[0]!.notification.threadKeys).toBeUndefined();
  });

  it('keeps in the own group an alert whose earlier thread is closed, gone or does not list it', async () => {
    const n = resolvedUnderNew({});
    const [a, b] = n.alerts;
    const keys = { [a!.fingerprint]: OLD, [b!.fingerprint]: OLD };
    for (const old of [
      undefined,
      { id: 'old', firing: [], resolvedAt: '2026-11-30T12:00:00.000Z' },
      { id: 'old', firing: ['0000000000000000'] },
    ]) {
      const parts = await partsByThread<Thread>({ ...n, threadKeys: keys }, async (k) => (k === OLD ? old : undefined));
      expect(parts.map((p) => [p.notification.groupKey, p.notification.alerts.length, p.thread])).toEqual([
        [NEW, 2, undefined],
      ]);
    }
  });

  it('splits a notification whose alerts were announced in different threads, earlier threads first', async () => {
    const n = resolvedUnderNew({});
    const [a, b] = n.alerts;
    const threads: Record<string, Thread> = {
      [OLD]: { id: 'old', firing: [a!.fingerprint] },
      [NEW]: { id: 'new', firing: [b!.fingerprint] },
    };
    const parts = await partsByThread({ ...n, threadKeys: { [a!.fingerprint]: OLD } }, async (k) => threads[k]);
    expect(parts.map((p) => [p.thread?.id, p.notification.alerts.map((x) => x.fingerprint)])).toEqual([
      ['old', [a!.fingerprint]],
      ['new', [b!.fingerprint]],
    ]);
    // Only labels the part's alerts share are shown as common.
    expect(parts[0]!.notification.commonLabels).toEqual(a!.labels);
  });
});

describe('a follow-up about records of several groups', () => {
  it('names the group key of each record announced under another than the first', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const records = n.alerts.map(
      ({ enrichment, ...alert }, i): AlertRecord => ({
        fingerprint: alert.fingerprint,
        startsAt: alert.startsAt,
        status: 'firing',
        alert,
        enrichment,
        groupKey: i === 0 ? OLD : NEW,
        externalURL: n.externalURL,
        channels: ['slack'],
        notifiedAt: alert.startsAt,
      }),
    );
    const notice = noticeFromRecords('acknowledged', records);
    expect(notice.groupKey).toBe(OLD);
    expect(notice.threadKeys).toEqual({ [records[1]!.fingerprint]: NEW });
    expect(noticeFromRecords('acknowledged', [records[0]!]).threadKeys).toBeUndefined();
  });
});

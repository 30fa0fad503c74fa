/**
 * receiveSnsEvent's own decisions, apart from the pipeline: AMP's Watchdog is a heartbeat like the
 * webhook's (recorded per sender, never sent; the default text names no sender, so the topic stands
 * in), and an event that is not well-formed is refused loudly.
 */
import { readFileSync } from 'node:fs';
import type { SNSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { labelSetFingerprint } from '../../../shared/alertmanager/fingerprint.js';
import { receiveSnsEvent, type AmpDeps } from '../../../shared/amp/receive.js';
import { testDeps } from '../../helpers/pipeline-deps.js';

function recorded(name: string): SNSEvent {
  return JSON.parse(
    readFileSync(new URL(`../../fixtures/amp/${name}.event.json`, import.meta.url), 'utf8'),
  ) as SNSEvent;
}

/** The recorded event with its alert renamed to the heartbeat's name, in the JSON or the text body. */
function watchdog(name: 'firing-json' | 'firing-default'): SNSEvent {
  const event = recorded(name);
  const body = event.Records[0]!.Sns.Message.replaceAll('VLLMKVCacheNearlyFull', 'Watchdog');
  if (name === 'firing-default') {
    // The default subject names the group's labels too: renamed with them.
    event.Records[0]!.Sns.Message = body;
    event.Records[0]!.Sns.Subject = event.Records[0]!.Sns.Subject!.replaceAll('VLLMKVCacheNearlyFull', 'Watchdog');
  } else {
    // Renamed, its fingerprint is its new labels' (a body whose fingerprints are not its labels' is refused).
    const group = JSON.parse(body) as { alerts: { labels: Record<string, string>; fingerprint: string }[] };
    for (const a of group.alerts) a.fingerprint = labelSetFingerprint(a.labels);
    event.Records[0]!.Sns.Message = JSON.stringify(group);
  }
  return event;
}

function deps(seen: string[]): AmpDeps {
  const unused = () => {
    throw new Error('the pipeline must not run for a heartbeat');
  };
  return {
    ...testDeps({ enrich: unused, now: () => Date.parse('2026-11-29T12:43:06Z') }),
    heartbeat: { alertname: 'Watchdog', seen: async (am) => void seen.push(am), stopped: () => {} },
  };
}

describe('receiveSnsEvent', () => {
  it("records AMP's Watchdog as a heartbeat from its external URL, or from the topic for the default text", async () => {
    const seen: string[] = [];
    expect(await receiveSnsEvent(watchdog('firing-json'), deps(seen))).toEqual([
      { messageId: expect.any(String), body: 'json', lost: 0 },
    ]);
    expect(await receiveSnsEvent(watchdog('firing-default'), deps(seen))).toEqual([
      { messageId: expect.any(String), body: 'text', lost: 0 },
    ]);
    expect(seen).toEqual(['http://alertmanager.example.com:9093', 'amp:arn:aws:sns:eu-west-1:123456789012:amp-alerts']);
  });

  it('throws for an event without records of SNS', async () => {
    await expect(
      receiveSnsEvent({ Records: [{ EventSource: 'aws:sns' }] } as unknown as SNSEvent, deps([])),
    ).rejects.toThrow(/malformed SNS event: Records\.0\.Sns/);
  });
});

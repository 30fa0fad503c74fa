/**
 * A few SIGKILLs of `npm start`'s entry at random points while it delivers, with Alertmanager-style
 * retries (`test/helpers/kill-loop.ts`; the ≥ 50-kill measurement is `bench/kill-loop.ts`, quoted in
 * docs/delivery.md). Nothing may be lost; an alert's message may be duplicated on a channel only by a kill
 * that interrupted its delivery (the request on the wire, or a success not yet in the ledger): at most
 * once per kill.
 */
import { describe, expect, it } from 'vitest';
import { runKillLoop } from '../helpers/kill-loop.js';

describe('npm start killed with SIGKILL while delivering', () => {
  it('loses no alert on any channel and duplicates a message at most once per kill', async () => {
    const kills = 4;
    const result = await runKillLoop({ kills });
    expect(result.missing).toEqual({ slack: 0, feishu: 0, sns: 0 });
    for (const ch of ['slack', 'feishu', 'sns'] as const) {
      expect(
        result.received[ch].every((n) => n >= 1 && n <= 1 + kills),
        `${ch}: ${result.received[ch].join(',')}`,
      ).toBe(true);
    }
  }, 180_000);
});

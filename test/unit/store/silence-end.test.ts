/**
 * The silence-ended step of the occurrence state machine: a firing sent again after the silence that
 * came with its acknowledgement ended is announced again (`renew`); before, or for an acknowledgement
 * of another occurrence or generation, it is the ledger's duplicate as before.
 */
import { describe, expect, it } from 'vitest';
import { nextStep, SILENCE_END_SKEW_MS, type Head } from '../../../shared/store/occurrence.js';
import { withSilenceEnd } from '../../../shared/store/silence-end.js';

const STARTS = '2026-11-29T12:42:23.143Z';
const ENDS_MS = Date.parse('2026-11-29T13:45:00.000Z');
const NOW_MS = Date.parse('2026-11-29T13:00:00.000Z');
const head: Head = { state: 'firing', generation: 2, pending: [], leaseUntil: 0 };
const firing = { status: 'firing' as const };
const record = (over: Record<string, unknown> = {}) => ({
  startsAt: STARTS,
  generation: 2,
  expiresAt: NOW_MS / 1000 + 3600,
  ack: { by: 'alice', at: STARTS, channel: 'slack', silenceId: 's-1', silenceEndsAt: new Date(ENDS_MS).toISOString() },
  ...over,
});

describe('silence end', () => {
  it('reads the end of the silence of this occurrence and generation from the record', () => {
    expect(withSilenceEnd(head, { startsAt: '2026-11-29T12:42:23.143000000Z' }, record(), NOW_MS)).toEqual({
      ...head,
      silenceEndsAtMs: ENDS_MS,
    });
  });

  it.each([
    ['no silence with the acknowledgement', record({ ack: { by: 'alice', at: STARTS, channel: 'slack' } })],
    ['no acknowledgement', record({ ack: undefined })],
    ['an acknowledgement of another occurrence', record({ startsAt: '2026-11-29T12:00:00.000Z' })],
    ['an acknowledgement of the generation before', record({ generation: 1 })],
    ['an expired record', record({ expiresAt: NOW_MS / 1000 - 1 })],
    ['an unreadable end', record({ ack: { by: 'a', at: STARTS, channel: 'slack', silenceEndsAt: 'soon' } })],
  ])('leaves the head as it is for %s', (_, r) => {
    expect(withSilenceEnd(head, { startsAt: STARTS }, r, NOW_MS)).toEqual(head);
  });

  it('renews a delivered firing once the silence has ended (allowing for the sender clock ahead of ours)', () => {
    const silenced = { ...head, silenceEndsAtMs: ENDS_MS };
    expect(nextStep(silenced, firing, ENDS_MS - SILENCE_END_SKEW_MS - 1)).toBe('ledger');
    expect(nextStep(silenced, firing, ENDS_MS - SILENCE_END_SKEW_MS)).toBe('renew');
    expect(nextStep(silenced, firing, ENDS_MS + 3_600_000)).toBe('renew');
    // Still being delivered: the ledger first (repair or in flight).
    expect(nextStep({ ...silenced, pending: ['slack'], leaseUntil: ENDS_MS + 1 }, firing, ENDS_MS)).toBe('ledger');
    // A resolve is a resolve.
    expect(nextStep(silenced, { status: 'resolved' }, ENDS_MS)).toBe('resolve');
  });
});

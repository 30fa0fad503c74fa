/**
 * The in-process timers of kept follow-ups (`npm start`): a follow-up runs at its due time, a second
 * schedule of the same id moves it (a retry's new due time), a run that throws is run again after the
 * follow-up's lease, and close drops them all. Fake timers drive the clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FollowUpTimers } from '../../../shared/ack/follow-up-timers.js';
import { FOLLOW_UP_RETRY } from '../../../shared/ack/follow-ups.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-29T13:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

function timers(fail = 0) {
  const runs: { id: string; at: number }[] = [];
  const errors: number[] = [];
  const t = new FollowUpTimers(
    async (id) => {
      runs.push({ id, at: Date.now() });
      if (runs.length <= fail) throw new Error('store unreachable');
    },
    (_id, _err, retryAtMs) => errors.push(retryAtMs),
    Date.now,
  );
  return { t, runs, errors };
}

describe('FollowUpTimers', () => {
  it('runs a follow-up at its due time; a later schedule of the same id replaces the earlier', async () => {
    const { t, runs } = timers();
    const due = Date.now() + 30_000;
    await t.schedule('a', Date.now() + 5000);
    await t.schedule('a', due);
    await vi.advanceTimersByTimeAsync(29_999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([{ id: 'a', at: due }]);
    expect(t.pending()).toEqual([]);
  });

  it('runs a run that threw again after the lease', async () => {
    const { t, runs, errors } = timers(1);
    const due = Date.now();
    await t.schedule('a', due);
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual([due + FOLLOW_UP_RETRY.leaseMs]);
    await vi.advanceTimersByTimeAsync(FOLLOW_UP_RETRY.leaseMs);
    expect(runs.map((r) => r.at - due)).toEqual([0, FOLLOW_UP_RETRY.leaseMs]);
  });

  it('drops every timer on close, and schedules nothing after', async () => {
    const { t, runs } = timers();
    await t.schedule('a', Date.now() + 1000);
    t.close();
    await t.schedule('b', Date.now() + 1000);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toEqual([]);
    expect(t.pending()).toEqual([]);
  });
});

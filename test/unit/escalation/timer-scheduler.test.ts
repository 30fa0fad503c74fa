/**
 * The in-process escalation timer of `npm start`: runs a check at its due time, once per job; retries a
 * failed check with growing pauses for at most `maxAgeMs` after the due time; and re-arms a wait longer
 * than `setTimeout` can hold instead of firing at once. Fake timers drive the clock.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TimerScheduler } from '../../../shared/escalation/scheduler.js';

const JOB = { fingerprint: '936e109b8c52c001', startsAt: '2026-11-29T12:42:23.143Z' };
const RETRY = { firstDelayMs: 1000, maxDelayMs: 4000, maxAgeMs: 10_000 };

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-11-29T13:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

function scheduler(outcomes: ('ok' | 'fail')[]) {
  const runs: number[] = [];
  const errors: (number | undefined)[] = [];
  const timers = new TimerScheduler(
    async () => {
      runs.push(Date.now());
      if ((outcomes[runs.length - 1] ?? 'ok') === 'fail') throw new Error('target down');
    },
    (_job, _err, retryAtMs) => errors.push(retryAtMs),
    Date.now,
    RETRY,
  );
  return { timers, runs, errors };
}

describe('TimerScheduler', () => {
  it('runs a job once at its due time, however often it is scheduled', async () => {
    const { timers, runs } = scheduler([]);
    const due = Date.now() + 5000;
    await timers.schedule(JOB, due);
    await timers.schedule(JOB, due);
    await vi.advanceTimersByTimeAsync(4999);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toEqual([due]);
    expect(timers.pending()).toEqual([]);
  });

  it('runs an overdue job at once', async () => {
    const { timers, runs } = scheduler([]);
    await timers.schedule(JOB, Date.now() - 60_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toEqual([Date.now()]);
  });

  it('retries a failed check after 1, 2, 4, 4 s… until maxAgeMs after the due time, then gives up', async () => {
    const { timers, runs, errors } = scheduler(Array(20).fill('fail'));
    const due = Date.now();
    await timers.schedule(JOB, due);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs.map((t) => t - due)).toEqual([0, 1000, 3000, 7000]);
    // The fourth failure would retry 11 s after the due time: past maxAgeMs, so none is planned.
    expect(errors.map((t) => (t === undefined ? undefined : t - due))).toEqual([1000, 3000, 7000, undefined]);
    expect(timers.pending()).toEqual([]);
  });

  it('stops retrying once a check succeeds, and never retries after close()', async () => {
    const ok = scheduler(['fail', 'ok']);
    await ok.timers.schedule(JOB, Date.now());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(ok.runs).toHaveLength(2);

    const closed = scheduler(['fail']);
    await closed.timers.schedule(JOB, Date.now());
    closed.timers.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(closed.runs).toHaveLength(0);
  });

  it('waits out a delay longer than setTimeout holds (about 24.8 days) instead of firing at once', async () => {
    const { timers, runs } = scheduler([]);
    const due = Date.now() + 30 * 24 * 3600 * 1000;
    await timers.schedule(JOB, due);
    await vi.advanceTimersByTimeAsync(25 * 24 * 3600 * 1000);
    expect(runs).toEqual([]);
    await vi.advanceTimersByTimeAsync(5 * 24 * 3600 * 1000);
    expect(runs).toEqual([due]);
  });
});

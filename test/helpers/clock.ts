/**
 * A clock for tests: `now` stands still unless the test moves it (`advance`) or code waits on it (`sleep`),
 * and `sleep` moves it instead of waiting, so a retry's backoff costs a test no real time and a test can
 * assert the waits themselves. `withRealTime` keeps real time for what a test cannot fake (a platform that
 * hangs until a request's time-out) and still skips the waits.
 */

/** A clock for a test: time moves only when told (`advance`) or waited on (`sleep`). */
export interface TestClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Moves the clock by `ms` at once, without waiting. */
  sleep(ms: number): Promise<void>;
  /** Moves the clock by `ms`. */
  advance(ms: number): void;
  /** Every `sleep` so far, milliseconds, in order. */
  readonly waits: number[];
}

/** @param startMs where the clock starts, epoch milliseconds (default: 2026-11-29T12:45:00Z) */
export function testClock(startMs = Date.parse('2026-11-29T12:45:00Z')): TestClock {
  let t = startMs;
  const waits: number[] = [];
  return {
    waits,
    now: () => t,
    sleep: async (ms) => {
      waits.push(ms);
      t += Math.max(0, ms);
    },
    advance: (ms) => {
      t += ms;
    },
  };
}

/**
 * Real time plus every wait skipped: attempts that run into a real time-out count against a budget, the
 * backoff between them costs the test no time. `advance` skips time too.
 */
export function withRealTime(): TestClock {
  const skipped = testClock(0);
  return {
    waits: skipped.waits,
    now: () => Date.now() + skipped.now(),
    sleep: skipped.sleep,
    advance: skipped.advance,
  };
}

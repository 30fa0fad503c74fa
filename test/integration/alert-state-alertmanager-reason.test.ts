/**
 * The Alertmanager alert-state source names what was wrong with an answer of the wrong shape (the
 * first problem, `path: message`), not a library's class: with zod/mini the reason read
 * "Alertmanager did not answer usably ($ZodError)". The reason is what on-call sees for an unknown state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertmanagerAlertState } from '../../shared/alert-state/alertmanager.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';

describe('Alertmanager alert state, an answer of the wrong shape', () => {
  let am: Loopback;
  beforeAll(async () => {
    am = await startLoopback({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '[{"fingerprint":1,"endsAt":"x"}]',
    });
  });
  afterAll(() => am?.close());

  it('names what is wrong with the body, not a library class ("$ZodError" with zod/mini)', async () => {
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const verdicts = await alertmanagerAlertState(am, 2000).statesOf([alert], new AbortController().signal);
    expect(verdicts.get(alert.fingerprint)).toEqual({
      state: 'unknown',
      source: 'alertmanager',
      reason:
        'Alertmanager did not answer usably (not its alerts list: 0.fingerprint: Invalid input: expected string, received number)',
    });
  });
});

/**
 * The readers–writer gate of the TransactWriteItems emulation (`shared/store/dynalite-gate.ts`): requests run
 * side by side, a transaction waits for those before it and holds back those after it, first come first served.
 */
import { describe, expect, it } from 'vitest';
import { Gate } from '../../../shared/store/dynalite-gate.js';

describe('dynalite gate', () => {
  it('runs requests together, a transaction alone after them, and later requests after the transaction', () => {
    const gate = new Gate();
    const log: string[] = [];
    const done = new Map<string, () => void>();
    const request = (name: string, alone = false) =>
      (alone ? gate.enterAlone : gate.enter).call(gate, (d) => {
        log.push(`start ${name}`);
        done.set(name, () => {
          log.push(`end ${name}`);
          d();
        });
      });
    request('a');
    request('b');
    request('txn', true);
    request('c');
    expect(log).toEqual(['start a', 'start b']);
    expect(gate.open).toBe(false);
    done.get('a')!();
    expect(log.at(-1)).toBe('end a');
    done.get('b')!();
    expect(log.slice(-2)).toEqual(['end b', 'start txn']);
    done.get('txn')!();
    expect(log.slice(-2)).toEqual(['end txn', 'start c']);
    done.get('c')!();
    expect(gate.open).toBe(true);
    // A second call of a `done` changes nothing: the next transaction still waits for the running request.
    request('d');
    done.get('txn')!();
    request('t2', true);
    expect(log).not.toContain('start t2');
    done.get('d')!();
    expect(log.at(-1)).toBe('start t2');
  });

  it('runs two transactions one after the other', () => {
    const gate = new Gate();
    const started: string[] = [];
    const finish: (() => void)[] = [];
    for (const name of ['t1', 't2']) {
      gate.enterAlone((d) => {
        started.push(name);
        finish.push(d);
      });
    }
    expect(started).toEqual(['t1']);
    finish[0]!();
    expect(started).toEqual(['t1', 't2']);
  });
});

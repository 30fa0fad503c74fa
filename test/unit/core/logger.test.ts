import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchedWriter, createLogger, withLogFields, withSequentialLogFields } from '../../../shared/core/logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(JSON.parse(line))) };
}

describe('withLogFields (the Lambda request id on every line)', () => {
  it('adds the fields to every line written while the function runs, by loggers made before it too', async () => {
    const { lines, logger } = capture();
    const child = logger.child({ groupKey: 'g' });
    await withLogFields({ awsRequestId: 'req-1' }, async () => {
      logger.info('group received');
      await new Promise(setImmediate);
      child.warn('channel failed', { channel: 'slack' });
    });
    logger.info('after');
    expect(lines.map(({ time: _t, ...rest }) => rest)).toEqual([
      { level: 'info', event: 'group received', awsRequestId: 'req-1' },
      { level: 'warn', event: 'channel failed', awsRequestId: 'req-1', groupKey: 'g', channel: 'slack' },
      { level: 'info', event: 'after' },
    ]);
  });

  it('keeps concurrent invocations apart and nests scopes', async () => {
    const { lines, logger } = capture();
    const run = (id: string, turns: number) =>
      withLogFields({ awsRequestId: id }, async () => {
        for (let i = 0; i < turns; i++) await new Promise(setImmediate);
        withLogFields({ phase: 'deliver' }, () => logger.info('line', { from: id }));
      });
    await Promise.all([run('a', 3), run('b', 0)]);
    expect(lines.map((l) => [l.from, l.awsRequestId, l.phase]).sort()).toEqual([
      ['a', 'a', 'deliver'],
      ['b', 'b', 'deliver'],
    ]);
  });

  it('returns what the function returns', async () => {
    expect(withLogFields({ awsRequestId: 'x' }, () => 42)).toBe(42);
    await expect(withLogFields({ awsRequestId: 'x' }, async () => 'done')).resolves.toBe('done');
  });
});

describe('withSequentialLogFields (one Lambda invocation at a time, no AsyncLocalStorage)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** `work` run to its end, the fake clock advanced as its timers need. */
  const settled = async <T>(work: Promise<T>): Promise<T> => {
    await vi.runAllTimersAsync();
    return work;
  };
  const fieldsOf = (lines: Record<string, unknown>[]) => lines.map(({ time: _t, level: _l, ...rest }) => rest);

  it('adds the fields to every line written until the promise settles, and none after', async () => {
    const { lines, logger } = capture();
    const child = logger.child({ groupKey: 'g' });
    await settled(
      withSequentialLogFields({ awsRequestId: 'req-1' }, async () => {
        logger.info('group received');
        await tick(1);
        child.warn('channel failed', { channel: 'slack' });
      }),
    );
    logger.info('after');
    await expect(
      withSequentialLogFields({ awsRequestId: 'req-2' }, async () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    logger.info('after a failed one');
    expect(fieldsOf(lines)).toEqual([
      { event: 'group received', awsRequestId: 'req-1' },
      { event: 'channel failed', awsRequestId: 'req-1', groupKey: 'g', channel: 'slack' },
      { event: 'after' },
      { event: 'after a failed one' },
    ]);
  });

  it('keeps a call made while another is pending apart from it, both ways', async () => {
    const { lines, logger } = capture();
    const run = (id: string, before: number, after: number) =>
      withSequentialLogFields({ awsRequestId: id, [`only-${id}`]: true }, async () => {
        await tick(before);
        logger.info('line', { from: id });
        await tick(after);
        logger.info('line', { from: id });
      });
    // a starts first and ends first; b overlaps it, then outlives it.
    await settled(Promise.all([run('a', 2, 2), run('b', 0, 15)]));
    for (const line of lines) expect(line).toMatchObject({ awsRequestId: line.from, [`only-${line.from}`]: true });
    expect(lines.filter((l) => 'only-a' in l && 'only-b' in l)).toEqual([]);
    expect(lines).toHaveLength(4);
  });

  it('is the scope withLogFields nests in', async () => {
    const { lines, logger } = capture();
    expect(
      await withSequentialLogFields({ awsRequestId: 'x' }, async () =>
        withLogFields({ phase: 'deliver' }, () => (logger.info('nested'), 42)),
      ),
    ).toBe(42);
    expect(fieldsOf(lines)).toEqual([{ event: 'nested', awsRequestId: 'x', phase: 'deliver' }]);
  });
});

describe('batchedWriter', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('hands the lines logged within its batch time to one write, in order, by the end of that time', async () => {
    const writes: string[] = [];
    const write = batchedWriter((text) => writes.push(text));
    const logger = createLogger('info', write);
    logger.info('first', { n: 1 });
    logger.child({ groupKey: 'g' }).info('second');
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(60);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.endsWith('\n')).toBe(true);
    expect(
      writes[0]!
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).event),
    ).toEqual(['first', 'second']);
    logger.info('third');
    await vi.advanceTimersByTimeAsync(60);
    expect(writes.map((w) => w.split('\n').length - 1)).toEqual([2, 1]);
  });

  it('writes a warn or error line at once, after the lines waiting before it (the line that explains a crash is never left in the buffer)', () => {
    const writes: string[] = [];
    const logger = createLogger(
      'info',
      batchedWriter((text) => writes.push(text)),
    );
    logger.info('before');
    expect(writes).toEqual([]);
    logger.error('dying', { reason: 'x' });
    expect(writes).toHaveLength(1);
    expect(
      writes[0]!
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).event),
    ).toEqual(['before', 'dying']);
    logger.warn('slow');
    expect(writes.map((w) => JSON.parse(w.trimEnd().split('\n').at(-1)!).event)).toEqual(['dying', 'slow']);
  });

  it('writes at once when the lines waiting pass 64 KiB', () => {
    const writes: string[] = [];
    const write = batchedWriter((text) => writes.push(text));
    for (let i = 0; i < 70; i++) write('x'.repeat(1023));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.length).toBe(64 * 1024);
  });
});

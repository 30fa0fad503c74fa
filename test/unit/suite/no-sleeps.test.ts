/**
 * Tests do not wait: no unit or integration test sleeps where a clock can be injected. A timer in a test
 * is either zero (a turn of the event loop, so that overdue timers run first), on vitest's fake clock, or
 * listed here with the reason no injected clock reaches it (a socket's own timeouts, a loopback server's answer spread over
 * time). Every `setTimeout` call in the two tiers' files is read with the TypeScript parser, the
 * promise form from `node:timers/promises` included.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Files with timers that are not zero, and why: fake timers, or real time no injected clock can stand in for. */
const TIMER_FILES: Record<string, string> = {
  'test/unit/core/logger.test.ts': 'fake timers (vi.useFakeTimers): the delays are advanced, never waited',
  'test/integration/http-server.test.ts':
    "Node's HTTP server closes idle keep-alive sockets by its own timer: only real idle time shows it does not",
  'test/integration/enrich-rounds.test.ts':
    'a loopback Prometheus holds its answers to count the requests open at once',
  'test/integration/prometheus-client.test.ts': "a loopback Prometheus streams an answer's second part later",
  'test/integration/prometheus-enrich.test.ts':
    'a budget spent by a busy event loop (performance.eventLoopUtilization) is real CPU and real time',
  'test/integration/chart-routes.test.ts':
    'polls for the loopback Prometheus to have received a request (no fixed wait)',
};

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `file:line delay` for every `setTimeout` whose delay is not the literal 0. */
function timers(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'setTimeout') {
      // setTimeout(fn, ms) or, from node:timers/promises, setTimeout(ms).
      const [first, second] = node.arguments;
      const delay = first && ts.isFunctionLike(first) ? second : (second ?? first);
      const zero = delay !== undefined && ts.isNumericLiteral(delay) && Number(delay.text) === 0;
      if (!zero) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${relative(ROOT, path)}:${line} ${delay?.getText(source) ?? '(no delay)'}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const found = ['test/unit', 'test/integration'].flatMap((dir) => files(join(ROOT, dir))).flatMap(timers);

describe('tests that wait', () => {
  it('wait only where no injected clock can stand in (listed with the reason)', () => {
    expect(found.filter((t) => !(t.split(':')[0]! in TIMER_FILES))).toEqual([]);
  });

  it('the list names no file that no longer waits', () => {
    const waiting = new Set(found.map((t) => t.split(':')[0]));
    expect(Object.keys(TIMER_FILES).filter((f) => !waiting.has(f))).toEqual([]);
  });
});

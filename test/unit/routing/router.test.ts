import { describe, expect, it } from 'vitest';
import { parseMatchers } from '../../../shared/alertmanager/matchers/index.js';
import { createRouter, type Route } from '../../../shared/routing/router.js';

const route = (matchers: string, channels: string[], cont = false): Route => ({
  matchers: matchers ? parseMatchers(matchers) : [],
  channels,
  continue: cont,
});

describe('createRouter', () => {
  const routes = [
    route('model_name=~"qwen3-.*"', ['qwen-feishu'], true),
    route('severity="critical", kind="kv_cache"', ['pager', 'slack']),
    route('severity="critical"', ['slack-critical']),
    route('severity="warning"', ['slack']),
  ];
  const router = createRouter(routes, ['fallback']);

  it.each([
    ['first match wins', { severity: 'critical', kind: 'kv_cache', model_name: 'llama' }, ['pager', 'slack']],
    ['later routes when earlier ones do not match', { severity: 'critical', kind: 'error_rate' }, ['slack-critical']],
    ['continue adds the next match', { severity: 'warning', model_name: 'qwen3-8b' }, ['qwen-feishu', 'slack']],
    [
      'continue then the first of the rest only',
      { severity: 'critical', kind: 'kv_cache', model_name: 'qwen3-8b' },
      ['qwen-feishu', 'pager', 'slack'],
    ],
    ['the default when nothing matches', { severity: 'info' }, ['fallback']],
  ])('%s', (_name, labels, expected) => {
    expect(router(labels)).toEqual(expected);
  });

  it('does not fall back to the default after a continue route matched alone', () => {
    expect(router({ model_name: 'qwen3-8b', severity: 'info' })).toEqual(['qwen-feishu']);
  });

  it('lists a channel once when several routes name it', () => {
    const r = createRouter([route('a="1"', ['x', 'y'], true), route('', ['y', 'z'])], []);
    expect(r({ a: '1' })).toEqual(['x', 'y', 'z']);
  });

  it('routes nowhere when a matching route names no channel', () => {
    expect(createRouter([route('severity="info"', [])], ['fallback'])({ severity: 'info' })).toEqual([]);
  });
});

/**
 * The "Silence" link must pre-fill Alertmanager's new-silence form with the alert's labels, whatever
 * they hold. The form reads its `filter` with the UI's own parser (ui/app/src/Utils/Filter.elm,
 * Alertmanager 0.32+): `{` matchers separated by `,` `}`, a matcher being a name made of
 * non-reserved characters, an operator and a JSON string. One matcher it cannot read empties the
 * whole form, so `readFilter` below mirrors that grammar and refuses what it refuses.
 */
import { describe, expect, it } from 'vitest';
import { silenceUrl } from '../../../shared/render/format.js';

/** Characters the UI never accepts in a name: Go's unicode.IsSpace and `{ } ! = ~ , \ " ' \``. */
const RESERVED = /[\p{White_Space}{}!=~,\\"'`]/u;

/** The UI's reading of a filter: the matchers, or `undefined` where it refuses the text. */
function readFilter(text: string): [string, string, string][] | undefined {
  const spaces = /^[ \n\r]*/; // Elm's Parser.spaces
  let rest = text;
  const take = (re: RegExp) => {
    const m = re.exec(rest);
    if (m) rest = rest.slice(m[0].length);
    return m?.[0];
  };
  if (!take(/^\{/)) return undefined;
  const out: [string, string, string][] = [];
  take(spaces);
  if (take(/^\}/)) return rest === '' ? out : undefined;
  for (;;) {
    const name = [...rest].findIndex((c) => RESERVED.test(c));
    if (name <= 0) return undefined;
    const key = [...rest].slice(0, name).join('');
    rest = rest.slice(key.length);
    const op = take(/^(=~|!~|=|!=)/);
    const string = take(/^"(?:[^"\\]|\\.)*"/su);
    if (!op || !string) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(string);
    } catch {
      return undefined;
    }
    out.push([key, op, value as string]);
    take(spaces);
    if (take(/^\}/)) return rest === '' ? out : undefined;
    if (!take(/^,/)) return undefined;
    take(spaces);
  }
}

function filterOf(url: string): string {
  return new URL(url.replace('/#/', '/')).searchParams.get('filter')!;
}

describe("silenceUrl: a filter Alertmanager's UI reads back exactly", () => {
  it.each<Record<string, string>>([
    { alertname: 'VLLMKVCacheNearlyFull', model_name: 'qwen3-8b' },
    { alertname: 'X', path: 'C:\\x "y"' },
    { alertname: 'X', summary: 'line1\nline2\ttab\rcr', bell: '\u0007' },
    { alertname: 'X', model_name: '模型🔥', empty: '' },
    { alertname: 'X', 'service.name': 'vllm-router', 'k8s.pod.name': 'vllm-0' }, // UTF-8 names (Alertmanager 0.32+ UI)
  ])('%j', (labels) => {
    const read = readFilter(filterOf(silenceUrl('http://am:9093', labels)));
    expect(read).toBeDefined();
    expect(Object.fromEntries(read!.map(([k, , v]) => [k, v]))).toEqual(labels);
    expect(read!.every(([, op]) => op === '=')).toBe(true);
    expect(read![0]![0]).toBe('alertname');
  });

  it('never quotes a name: `"` is reserved in the filter, and a quoted name empties the whole form', () => {
    const filter = filterOf(silenceUrl('http://am:9093', { alertname: 'X', 'service.name': 'vllm-router' }));
    expect(filter).toBe('{alertname="X",service.name="vllm-router"}');
    expect(readFilter('{alertname="X","service.name"="vllm-router"}')).toBeUndefined();
  });

  it('leaves out labels whose names the UI cannot write, rather than losing the whole form', () => {
    const labels = { alertname: 'X', 'my label': 'a', 'a=b': 'c', job: 'vllm' };
    const read = readFilter(filterOf(silenceUrl('http://am:9093', labels)));
    expect(read).toEqual([
      ['alertname', '=', 'X'],
      ['job', '=', 'vllm'],
    ]);
  });

  it('leaves out a label name that is not well-formed Unicode (a lone surrogate cannot be URL-encoded)', () => {
    const labels = { alertname: 'X', 'x\ud800': 'a', job: 'vllm\udc00' };
    const read = readFilter(filterOf(silenceUrl('http://am:9093', labels)));
    expect(read).toEqual([
      ['alertname', '=', 'X'],
      ['job', '=', 'vllm\udc00'],
    ]);
  });
});

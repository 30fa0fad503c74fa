import { describe, expect, it } from 'vitest';
import {
  formatMatcher,
  matches,
  matchesAll,
  MatcherSyntaxError,
  parseMatcher,
  parseMatchers,
} from '../../../shared/alertmanager/matchers/index.js';

const labels = { alertname: 'VLLMKVCacheNearlyFull', severity: 'critical', kind: 'kv_cache', model_name: 'qwen3-8b' };
const m = (text: string) => matches(parseMatcher(text), labels);

describe('parseMatcher and matches', () => {
  it.each([
    ['severity="critical"', true],
    ['severity="warning"', false],
    ['severity!="warning"', true],
    ['severity!="critical"', false],
    ['kind=~"kv_cache|queue"', true],
    ['kind=~"kv"', false], // anchored: a regex must match the whole value
    ['kind=~"kv.*"', true],
    ['kind!~"kv_cache|queue"', false],
    ['model_name!~"llama-.*"', true],
    ['team=""', true], // a missing label is the empty string
    ['team!=""', false],
    ['team=~".*"', true],
    ['severity = critical', true], // bare value, spaces around the operator
    ['  model_name=~qwen3-.*  ', true],
  ])('%s → %s', (text, expected) => {
    expect(m(text)).toBe(expected);
  });

  it('anchors like Alertmanager: ^(?:re)$, so alternatives do not escape the anchors', () => {
    expect(parseMatcher('kind=~"a|kv_cache"').regex!.pattern()).toBe('^(?:a|kv_cache)$');
    expect(matches(parseMatcher('kind=~"a|b"'), { kind: 'xb' })).toBe(false);
  });

  it('unescapes quoted values and matches code points, as Go does', () => {
    expect(parseMatcher('summary="say \\"hi\\" \\\\ bye"').value).toBe('say "hi" \\ bye');
    expect(parseMatcher('x="a\\nb"').value).toBe('a\nb');
    expect(matches(parseMatcher('icon=~"."'), { icon: '🔥' })).toBe(true);
    expect(matches(parseMatcher('path=~"\\d+"'), { path: '123' })).toBe(true);
  });

  it.each([
    ['severity', /not a matcher/],
    ['severity=="critical"', /unbalanced or unescaped double quotes|opens a double quote/],
    ['severity="critical', /opens a double quote it does not close/],
    ['severity="crit"ical"', /unescaped double quote inside the value/],
    ['kind=~"(kv"', /invalid regular expression/],
  ])('rejects %s, quoting it', (text, message) => {
    expect(() => parseMatcher(text)).toThrow(MatcherSyntaxError);
    expect(() => parseMatcher(text)).toThrow(message);
  });
});

describe('parseMatchers', () => {
  it('reads a brace list with commas inside quotes', () => {
    const list = parseMatchers('{severity="critical", summary=~"a,b|c", kind!=queue}');
    expect(list.map(formatMatcher)).toEqual(['severity="critical"', 'summary=~"a,b|c"', 'kind!="queue"']);
  });

  it('accepts what the classic grammar accepts: no matcher, one brace, a trailing comma', () => {
    expect(parseMatchers('{}')).toEqual([]);
    expect(parseMatchers('')).toEqual([]);
    expect(parseMatchers('{a="b"').map(formatMatcher)).toEqual(['a="b"']);
    expect(parseMatchers('a="b"}').map(formatMatcher)).toEqual(['a="b"']);
    expect(parseMatchers('a=b, c=d ,').map(formatMatcher)).toEqual(['a="b"', 'c="d"']);
  });

  it('rejects an empty matcher between commas', () => {
    expect(() => parseMatchers('a=b,,c=d')).toThrow(MatcherSyntaxError);
  });
});

describe("Alertmanager's regular expressions: RE2, anchored, not JavaScript's", () => {
  it.each([
    ['alertname=~"(?i)vllm.*"', { alertname: 'VLLMQueueBacklog' }, true],
    ['alertname=~"(?i)vllm.*"', { alertname: 'GPUMemoryLeak' }, false],
    ['alertname=~"(?i:VLLM)queue.*"', { alertname: 'vllmqueueBacklog' }, true],
    ['alertname=~"(?i:VLLM)queue.*"', { alertname: 'vllmQueueBacklog' }, false],
    ['model_name=~"qwen3\\-8b"', { model_name: 'qwen3-8b' }, true],
    ['model_name=~"qwen3\\.8b"', { model_name: 'qwen3.8b' }, true],
    ['model_name=~"qwen3\\.8b"', { model_name: 'qwen3x8b' }, false],
    ['name=~"[[:upper:]]+"', { name: 'ABC' }, true],
    ['name=~"[[:upper:]]+"', { name: 'u:' }, false], // JavaScript reads [[:upper:]] as a class of [ : u p e r
    ['name=~"\\Qa.b\\E"', { name: 'a.b' }, true],
    ['name=~"\\Qa.b\\E"', { name: 'axb' }, false],
    ['name=~"\\pL+"', { name: 'héllo' }, true],
    ['name=~"(?s)a.b"', { name: 'a\nb' }, true],
    ['name=~"a.b"', { name: 'a\nb' }, false],
    ['name=~"[^a]"', { name: '🔥' }, true], // one rune, as in Go
    ['name=~"\\x41"', { name: 'A' }, true],
    ['name=~"(?U)a+"', { name: 'aa' }, true],
  ])('%s on %j → %s', (text, labels, expected) => {
    expect(matches(parseMatcher(text), labels)).toBe(expected);
  });

  it.each([
    ['kind=~"(?=kv)kv_cache"', 'lookahead'],
    ['kind=~"(kv)\\1"', 'back-reference'],
    ['kind=~"a{1001}"', 'repeat count above 1000'],
    ['kind=~"\\C"', 'single-byte \\C'],
  ])('rejects %s (%s: RE2 has none, Alertmanager refuses the file)', (text) => {
    expect(() => parseMatcher(text)).toThrow(MatcherSyntaxError);
    expect(() => parseMatcher(text)).toThrow(/invalid regular expression/);
  });
});

describe('UTF-8 label names (Alertmanager 0.27+ matcher grammar, the default fallback mode)', () => {
  const otel = { 'service.name': 'vllm-router', 'k8s.pod.name': 'vllm-0', 模型: 'qwen3-8b', 'a"b': 'q' };
  it.each([
    ['{"service.name"="vllm-router"}', true],
    ['"service.name"="vllm-router"', true],
    ['"service.name"!="vllm-router"', false],
    ['service.name=vllm-router', true], // unquoted: any run of non-reserved characters
    ['{"k8s.pod.name"=~"vllm-\\\\d+"}', true], // UTF-8 grammar: "\\d" in quotes is the regex \d
    ['"模型"=~"(?i)QWEN3-.*"', true],
    ['模型="qwen3-8b"', true],
    ['9name=""', true], // not a classic name, but a run of non-reserved characters
    ['"a\\"b"="q"', true],
    ['"service.name"="\\u0076llm-router"', true], // Go string escapes in quoted values
  ])('%s → %s', (text, expected) => {
    expect(matchesAll(parseMatchers(text), otel)).toBe(expected);
  });

  it('reads a list mixing classic and UTF-8 names', () => {
    const list = parseMatchers('{"service.name"="vllm-router", severity="critical", "k8s.pod.name"=~"vllm-.*",}');
    expect(list.map((x) => [x.name, x.type, x.value])).toEqual([
      ['service.name', '=', 'vllm-router'],
      ['severity', '=', 'critical'],
      ['k8s.pod.name', '=~', 'vllm-.*'],
    ]);
  });

  it('reads Go escapes in quoted UTF-8 values: bytes that form UTF-8, octal, \\U; refuses bytes that do not', () => {
    expect(parseMatchers('"service.name"="\\xf0\\x9f\\x99\\x82"')[0]!.value).toBe('🙂');
    expect(parseMatchers('"service.name"="\\101\\U0001f642\\t"')[0]!.value).toBe('A🙂\t');
    expect(() => parseMatchers('"service.name"="\\xf0\\x9f"')).toThrow(MatcherSyntaxError);
    expect(() => parseMatchers('"service.name"="\\ud800"')).toThrow(MatcherSyntaxError);
  });

  it('keeps the classic reading where both grammars accept the text but differ (Alertmanager logs "disagreement" and uses it)', () => {
    // Classic: spurious escapes stay literal; the UTF-8 grammar would read the bytes of 🙂.
    expect(parseMatcher('qux="\\xf0\\x9f\\x99\\x82"').value).toBe('\\xf0\\x9f\\x99\\x82');
  });

  it.each([
    ['"service.name"="x', /missing end "|not close/],
    ['"service.name"="a\\qb"', /invalid/],
    ['{"service.name"="x"', /close brace|not close/],
    ['"service.name"~="x"', /operator|unexpected|invalid/],
  ])('rejects %s', (text, message) => {
    expect(() => parseMatchers(text)).toThrow(MatcherSyntaxError);
    expect(() => parseMatchers(text)).toThrow(message);
  });

  it('formats a UTF-8 name quoted, a classic one bare, and both read back to the same matcher', () => {
    for (const text of [
      '"service.name"=~"a\\\\.b|\\"c\\""',
      'severity!="say \\"hi\\"\\n"',
      '"a b"="x"',
      '"模型"="qwen"',
    ]) {
      const parsed = parseMatcher(text);
      const again = parseMatcher(formatMatcher(parsed));
      expect([again.name, again.type, again.value]).toEqual([parsed.name, parsed.type, parsed.value]);
    }
    expect(formatMatcher(parseMatcher('"service.name"="x"'))).toBe('service.name="x"');
    expect(formatMatcher(parseMatcher('"a b"=~"x"'))).toBe('"a b"=~"x"');
    expect(formatMatcher(parseMatcher('severity="critical"'))).toBe('severity="critical"');
  });
});

describe('where Alertmanager 0.27+ accepts more than 0.25 (the UTF-8 grammar as fallback)', () => {
  it('reads Go string escapes in a quoted regex the classic grammar refuses', () => {
    // Classic: `\u0041` reaches RE2, which has no \u escape; the UTF-8 grammar reads it as "A".
    expect(parseMatcher('kind=~"\\u0041.*"').value).toBe('A.*');
  });
});

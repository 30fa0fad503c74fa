import { describe, expect, it } from 'vitest';
import { formatMatcher, matches, MatcherSyntaxError, parseMatcher, parseMatchers } from '../../../shared/routing/matcher.js';

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
    expect(parseMatcher('kind=~"a|kv_cache"').regex!.source).toBe('^(?:a|kv_cache)$');
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
    ['9name="x"', /not a matcher/],
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

  it('rejects an empty list and an unclosed brace', () => {
    expect(() => parseMatchers('{}')).toThrow(/no matcher/);
    expect(() => parseMatchers('{a="b"')).toThrow(/brace/);
  });
});

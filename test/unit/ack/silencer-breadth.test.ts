/**
 * "Acknowledge and silence" never makes a silence broader than the alerts acknowledged: an alert whose
 * labels are a part of another acknowledged alert's (which anyone who can post to Alertmanager's API can
 * slip into a group) is not silenced with them.
 */
import { describe, expect, it } from 'vitest';
import { broaderThanOthers } from '../../../shared/ack/silencer.js';
import { silenceGroups } from '../../../shared/alertmanager/silence-groups.js';
import type { AlertRecord } from '../../../shared/store/alert-record.js';

const record = (labels: Record<string, string>): AlertRecord =>
  ({ fingerprint: JSON.stringify(labels), alert: { labels } }) as unknown as AlertRecord;

describe('silences no broader than the alerts', () => {
  it('leaves out an alert whose labels are a part of another of its rule', () => {
    const planted = record({ alertname: 'HighLatency', cluster: 'prod' });
    const real = ['a', 'b', 'c'].map((i) => record({ alertname: 'HighLatency', cluster: 'prod', instance: i }));
    const refused = broaderThanOthers([...real, planted]);
    expect([...refused.keys()]).toEqual([planted]);
    expect(refused.get(planted)).toMatch(/^not silenced: its labels are a part of another alert/);
  });

  it('compares nothing in a storm of one shape, and never across rules or differing values', () => {
    const storm = Array.from({ length: 5000 }, (_, i) => record({ alertname: 'KV', model: `m${i}` }));
    const otherRule = record({ alertname: 'Other' });
    const otherValue = record({ alertname: 'KV', cluster: 'dev' });
    expect(broaderThanOthers([...storm, otherRule, otherValue]).size).toBe(0);
  });
});

describe('an empty label value is an absent label (as Alertmanager reads it)', () => {
  it('does not hide that an alert is broader than another', () => {
    const planted = record({ alertname: 'Wid1', instance: '' });
    const real = record({ alertname: 'Wid1', instance: 'a' });
    expect([...broaderThanOthers([real, planted]).keys()]).toEqual([planted]);
  });

  it('never puts an empty alternative into a grouped silence: it would match every alert without the label', () => {
    const alerts = [
      { fingerprint: 'a', labels: { alertname: 'Wid1', instance: 'a' } },
      { fingerprint: 'b', labels: { alertname: 'Wid1', instance: 'b' } },
      { fingerprint: 'e', labels: { alertname: 'Wid1', instance: '' } },
    ];
    const groups = silenceGroups(alerts);
    const matchers = groups.flatMap((g) => g.matchers);
    expect(matchers.filter((m) => m.isRegex).map((m) => m.value)).toEqual(['a|b']);
    expect(matchers.some((m) => m.value === '' || m.value.split('|').includes(''))).toBe(false);
    expect(groups.find((g) => g.fingerprints.includes('e'))!.matchers).toEqual([
      { name: 'alertname', value: 'Wid1', isRegex: false, isEqual: true },
    ]);
  });
});

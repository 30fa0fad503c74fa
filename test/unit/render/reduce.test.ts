import { describe, expect, it } from 'vitest';
import { alertLines, alertLinks, PLAIN } from '../../../shared/render/content.js';
import {
  cutAlert,
  cutText,
  labelsCut,
  MAX_FIELD_BYTES,
  reduceNotification,
  REDUCED_FIELD_BYTES,
} from '../../../shared/render/reduce.js';
import { alertJsonForRecord, fromJson, MAX_RECORD_JSON_BYTES } from '../../../shared/store/alert-record-items.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('cutText', () => {
  it('returns the value itself when it fits and is well-formed', () => {
    const value = 'KV cache 97% full on qwen3-8b 👍🏽';
    expect(cutText(value, 100)).toBe(value);
  });

  it('cuts to the byte limit, at a character boundary, ending in "… (cut)"', () => {
    const cut = cutText('告'.repeat(1000), 100);
    expect(bytes(cut)).toBeLessThanOrEqual(100);
    expect(cut).toMatch(/^告+… \(cut\)$/);
  });

  it('repairs lone surrogates (U+FFFD) and marks the value', () => {
    expect(cutText('a\ud800b\udfffc', 100)).toBe('a\ufffdb\ufffdc (cut)');
    expect(cutText('😀', 100)).toBe('😀');
  });

  it('in strict mode removes control and bidi-override characters, keeping tab and line feed', () => {
    expect(cutText('a\u0000b\u0007c\u202Ed\te\nf', 100, true)).toBe('abcd\te\nf (cut)');
    expect(cutText('a\u0000b', 100)).toBe('a\u0000b');
  });
});

describe('cutAlert', () => {
  const alert = () => structuredClone(fixtureNotification('firing-queue-backlog-two-models').alerts[0]!);

  it('leaves an ordinary alert as it is (the same object)', () => {
    const a = alert();
    expect(cutAlert(a, MAX_FIELD_BYTES)).toBe(a);
  });

  it('cuts values over the limit and names them; fingerprint, startsAt and status are never touched', () => {
    const a = alert();
    a.annotations.description = 'x'.repeat(MAX_FIELD_BYTES + 1);
    a.labels.pod = 'p'.repeat(MAX_FIELD_BYTES * 2);
    const cut = cutAlert(a, MAX_FIELD_BYTES);
    expect(cut.cut).toEqual(['labels.pod', 'annotations.description']);
    expect(bytes(cut.annotations.description!)).toBeLessThanOrEqual(MAX_FIELD_BYTES);
    expect(cut.annotations.description!.endsWith('… (cut)')).toBe(true);
    expect([cut.fingerprint, cut.startsAt, cut.status]).toEqual([a.fingerprint, a.startsAt, a.status]);
    expect(a.annotations.description!.length).toBe(MAX_FIELD_BYTES + 1);
    expect(labelsCut(cut)).toBe(true);
  });

  it('drops a generatorURL over the limit, and in strict mode any link that is not a plain http(s) URL', () => {
    const a = alert();
    a.generatorURL = `http://prometheus/graph?g0.expr=${'e'.repeat(600)}`;
    a.annotations.runbook_url = 'javascript:alert(1)';
    const strict = cutAlert(a, REDUCED_FIELD_BYTES, true);
    expect(strict.generatorURL).toBe('');
    expect(strict.cut).toEqual(expect.arrayContaining(['generatorURL', 'annotations.runbook_url']));
    expect(
      alertLinks(
        { ...strict, enrichment: { status: 'unavailable', kind: 'queue', reason: 'x' } },
        'http://am:9093',
      ).map((l) => l.label),
    ).toEqual(['Silence']);
  });
});

describe('how a cut alert is shown', () => {
  it('says what was cut right under the title, and gives no links made of cut fields', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    const a = {
      ...n.alerts[0]!,
      ...cutAlert({ ...n.alerts[0]!, labels: { ...n.alerts[0]!.labels, model_name: 'm\ud800' } }, MAX_FIELD_BYTES),
    };
    expect(alertLines(a, PLAIN)[1]).toBe('(cut) too long or not valid text, shown in part: model_name');
    expect(alertLinks(a, n.externalURL).map((l) => l.label)).toEqual(['Graph', 'Runbook']);
  });
});

describe('reduceNotification', () => {
  it('cuts every value of every alert and of the group strictly, and keeps our own text', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    n.alerts[0]!.annotations.description = `dump\u0000${'d'.repeat(5000)}`;
    n.commonAnnotations.description = 'x'.repeat(5000);
    n.externalURL = 'http://alertmanager example.com';
    const reduced = reduceNotification(n);
    expect(bytes(reduced.alerts[0]!.annotations.description!)).toBeLessThanOrEqual(REDUCED_FIELD_BYTES);
    expect(reduced.alerts[0]!.annotations.description).toMatch(/^dumpd+… \(cut\)$/);
    expect(reduced.alerts[1]!.cut).toBeUndefined();
    expect(reduced.alerts[1]!.enrichment).toEqual(n.alerts[1]!.enrichment);
    expect(bytes(reduced.commonAnnotations.description!)).toBeLessThanOrEqual(REDUCED_FIELD_BYTES);
    expect(reduced.externalURL).toBe('');
  });
});

describe('alertJsonForRecord', () => {
  it('keeps an ordinary alert whole', () => {
    const a = fixtureNotification('firing-kv-cache-critical').alerts[0]!;
    expect(fromJson(alertJsonForRecord(a))).toEqual(JSON.parse(JSON.stringify(a)));
  });

  it('cuts further, field by field, until alert and enrichment JSON fit the record', () => {
    const a = structuredClone(fixtureNotification('firing-kv-cache-critical').alerts[0]!);
    for (let i = 0; i < 40; i++) a.annotations[`dump_${i}`] = 'y'.repeat(15 * 1024);
    const enrichment = JSON.stringify({ big: 'e'.repeat(100 * 1024) });
    const json = alertJsonForRecord(a, enrichment);
    expect(bytes(json) + bytes(enrichment)).toBeLessThanOrEqual(MAX_RECORD_JSON_BYTES);
    const stored = fromJson(json) as typeof a & { cut: string[] };
    expect(stored.annotations.summary).toBe(a.annotations.summary);
    expect(stored.cut).toHaveLength(40);
  });
});

/**
 * A storm digest's link: the token carries the set's id and size under its signature, and the link
 * falls back to its first alerts when the set cannot be stored.
 */
import { describe, expect, it } from 'vitest';
import {
  AckLinks,
  CLOCK_SKEW_MS,
  linkCover,
  MAX_LINK_TOKEN_CHARS,
  MAX_SENDER_AHEAD_MS,
} from '../../../shared/ack/links.js';
import { MAX_TOKEN_ALERTS, signAckToken, verifyAckToken, type AckClaims } from '../../../shared/ack/token.js';
import { Secret } from '../../../shared/core/secret.js';
import { silentLogger } from '../../../shared/core/logger.js';
import type { AlertSet, AlertSetStore } from '../../../shared/store/alert-set.js';

const NOW = Date.parse('2026-11-29T12:45:00Z');
const KEY = new Secret('current-ack-secret-0123456789abcdef');
const settings = { publicUrl: 'https://ack.example.com', keys: { current: KEY }, ttlSeconds: 3600 };
const fingerprints = Array.from({ length: 120 }, (_, i) => `f${String(i).padStart(15, '0')}`);
const linked = (fps: string[]) => fps.map((fingerprint) => ({ fingerprint, startsAt: '2026-11-29T12:00:00Z' }));
const tokenOf = (url: string) => url.split('/').pop()!;

class MemorySets implements AlertSetStore {
  readonly sets = new Map<string, { set: AlertSet; expiresAtMs: number }>();
  failing = false;
  async put(id: string, set: AlertSet, expiresAtMs: number): Promise<void> {
    if (this.failing) throw new Error('ProvisionedThroughputExceededException (test)');
    this.sets.set(id, { set, expiresAtMs });
  }
  async get(id: string): Promise<AlertSet | undefined> {
    return this.sets.get(id)?.set;
  }
}

describe('storm digest links', () => {
  it('stores the alerts beyond what a token carries and names the set, signed', async () => {
    const sets = new MemorySets();
    const url = await new AckLinks(settings, sets).urlForAll(linked(fingerprints), 'g', 'slack', { nowMs: NOW });
    const claims = verifyAckToken(tokenOf(url), { current: KEY }, NOW);
    expect(claims.set).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), alerts: 120 });
    expect(claims.fingerprints).toEqual(fingerprints.slice(0, MAX_TOKEN_ALERTS));
    expect(sets.sets.get(claims.set!.id)).toEqual({
      set: { fingerprints, groupKey: 'g' },
      expiresAtMs: claims.expiresAt * 1000,
    });
  });

  it('needs no set for 50 alerts or fewer', async () => {
    const sets = new MemorySets();
    const url = await new AckLinks(settings, sets).urlForAll(linked(fingerprints.slice(0, 50)), 'g', 'slack', {
      nowMs: NOW,
    });
    expect(verifyAckToken(tokenOf(url), { current: KEY }, NOW).set).toBeUndefined();
    expect(sets.sets.size).toBe(0);
  });

  it('still links the first alerts when the set cannot be written', async () => {
    const sets = new MemorySets();
    sets.failing = true;
    const url = await new AckLinks(settings, sets, silentLogger).urlForAll(linked(fingerprints), 'g', 'slack', {
      nowMs: NOW,
    });
    const claims = verifyAckToken(tokenOf(url), { current: KEY }, NOW);
    expect(claims.set).toBeUndefined();
    expect(claims.fingerprints).toHaveLength(MAX_TOKEN_ALERTS);
  });

  it('stays short with over-long fingerprints: they go to a set, the token names what fits (a page link opens, a button carries it)', async () => {
    // 256-byte fingerprints (the longest kept as they are): 50 of them made a ~17 KB token, over Node's
    // 16 KiB request-header limit (431 for the page) and every platform's button limits.
    const long = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(3, '0')}${'f'.repeat(253)}`);
    const sets = new MemorySets();
    const url = await new AckLinks(settings, sets).urlForAll(linked(long), 'g', 'slack', { nowMs: NOW });
    expect(tokenOf(url).length).toBeLessThanOrEqual(MAX_LINK_TOKEN_CHARS);
    const claims = verifyAckToken(tokenOf(url), { current: KEY }, NOW);
    expect(claims.set?.alerts).toBe(50);
    expect(sets.sets.get(claims.set!.id)?.set.fingerprints).toEqual(long);
    expect(claims.fingerprints.length).toBeGreaterThan(0);
    expect(long.slice(0, claims.fingerprints.length)).toEqual(claims.fingerprints);
    // Without a set store the link names what fits: its first alerts.
    const alone = new AckLinks(settings).url(linked(long), 'g', 'slack', NOW);
    expect(tokenOf(alone).length).toBeLessThanOrEqual(MAX_LINK_TOKEN_CHARS);
    // Ordinary fingerprints: all 50 named, no set.
    const plain = await new AckLinks(settings, sets).urlForAll(linked(fingerprints.slice(0, 50)), 'g', 'slack', {
      nowMs: NOW,
    });
    expect(verifyAckToken(tokenOf(plain), { current: KEY }, NOW).fingerprints).toHaveLength(50);
  });

  it('cannot have its set swapped: the set id is under the signature', async () => {
    const url = await new AckLinks(settings, new MemorySets()).urlForAll(linked(fingerprints), 'g', 'slack', {
      nowMs: NOW,
    });
    const [payload, signature] = tokenOf(url).split('.');
    const body = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = `${Buffer.from(JSON.stringify({ ...body, s: 'f'.repeat(32), n: 5 })).toString('base64url')}.${signature}`;
    expect(() => verifyAckToken(forged, { current: KEY }, NOW)).toThrow(/signature does not match/);
  });

  it('ignores a malformed set claim (an id not 32 hex, a count not a positive integer)', () => {
    const base: AckClaims = {
      fingerprints: ['a'],
      group: 'g',
      channel: 'slack',
      issuedAt: NOW / 1000,
      expiresAt: NOW / 1000 + 60,
    };
    for (const set of [
      { id: 'x'.repeat(32), alerts: 3 },
      { id: 'a'.repeat(32), alerts: 0 },
      { id: 'a'.repeat(32), alerts: 1.5 },
    ]) {
      expect(
        verifyAckToken(signAckToken({ ...base, set }, { current: KEY }), { current: KEY }, NOW).set,
      ).toBeUndefined();
    }
  });
});

describe('what a link covers', () => {
  it('never occurrences starting a day after its issue time, whatever startsAt an alert claimed', () => {
    const issuedAt = 1_796_000_000;
    const future = Date.parse('2099-01-01T00:00:00Z');
    expect(linkCover({ issuedAt, startsAt: future }).startsAtMs).toBe(issuedAt * 1000 + MAX_SENDER_AHEAD_MS);
    const aheadByHours = issuedAt * 1000 + 2 * 3_600_000;
    expect(linkCover({ issuedAt, startsAt: aheadByHours }).startsAtMs).toBe(aheadByHours);
    const earlier = issuedAt * 1000 - 60_000;
    expect(linkCover({ issuedAt, startsAt: earlier }).startsAtMs).toBe(earlier);
    expect(linkCover({ issuedAt }).startsAtMs).toBe(issuedAt * 1000 + CLOCK_SKEW_MS);
  });
});

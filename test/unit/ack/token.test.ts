import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  AckTokenError,
  MAX_TOKEN_ALERTS,
  signAckToken,
  tokenGroup,
  verifyAckToken,
  type AckClaims,
} from '../../../shared/ack/token.js';
import { TOKEN_PROBLEM_STATUS, type SigningKeys } from '../../../shared/core/signed-token.js';
import { Secret } from '../../../shared/core/secret.js';

const NOW = Date.parse('2026-11-29T12:45:00Z');
const KEY = new Secret('current-ack-secret-0123456789abcdef');
const OLD = new Secret('previous-ack-secret-0123456789abcdef');
const claims: AckClaims = {
  fingerprints: ['936e109b8c52c001', 'c10780c1bb3d6376'],
  group: '{}:{alertname="VLLMKVCacheNearlyFull"}',
  channel: 'slack',
  issuedAt: NOW / 1000,
  expiresAt: NOW / 1000 + 3600,
};

function problem(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof AckTokenError) return err.problem;
    throw err;
  }
  return 'accepted';
}

describe('ack tokens', () => {
  it('round-trips the claims and is URL-safe', () => {
    const token = signAckToken(claims, { current: KEY });
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(verifyAckToken(token, { current: KEY }, NOW)).toEqual(claims);
  });

  it('is HMAC-SHA256 over "ack.v1." + payload (independent check)', () => {
    const token = signAckToken(claims, { current: KEY });
    const [payload, signature] = token.split('.');
    expect(signature).toBe(createHmac('sha256', KEY.reveal()).update(`ack.v1.${payload}`).digest('base64url'));
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toEqual({
      v: 1,
      f: claims.fingerprints,
      g: claims.group,
      c: 'slack',
      iat: claims.issuedAt,
      exp: claims.expiresAt,
    });
  });

  it('refuses altered payloads and signatures, other keys and garbage', () => {
    const token = signAckToken(claims, { current: KEY });
    const [payload, signature] = token.split('.') as [string, string];
    const other = Buffer.from(
      JSON.stringify({
        v: 1,
        f: ['ffffffffffffffff'],
        g: claims.group,
        c: 'slack',
        iat: claims.issuedAt,
        exp: claims.expiresAt,
      }),
    ).toString('base64url');
    const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1);
    expect(problem(() => verifyAckToken(`${other}.${signature}`, { current: KEY }, NOW))).toBe('forged');
    expect(problem(() => verifyAckToken(`${payload}.${flipped}`, { current: KEY }, NOW))).toBe('forged');
    expect(problem(() => verifyAckToken(`${payload}.${signature.slice(0, 20)}`, { current: KEY }, NOW))).toBe('forged');
    expect(problem(() => verifyAckToken(token, { current: OLD }, NOW))).toBe('forged');
    for (const junk of ['', 'abc', `${payload}.${signature}.x`, `${payload}.sig%20`, 'a'.repeat(5000)]) {
      expect(
        problem(() => verifyAckToken(junk, { current: KEY }, NOW)),
        junk.slice(0, 20),
      ).toBe('malformed');
    }
  });

  it('refuses a signature that differs only in the unused low bits of its last character', () => {
    // 32 bytes are 43 base64url characters: the last carries 4 bits and 2 unused ones, which a
    // lenient decoder ignores, so several spellings would decode to the same MAC.
    const token = signAckToken(claims, { current: KEY });
    const [payload, signature] = token.split('.') as [string, string];
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = ALPHABET.indexOf(signature.at(-1)!);
    const twins = [1, 2, 3].map((low) => signature.slice(0, -1) + ALPHABET[(last & ~3) | ((last + low) & 3)]);
    expect(twins.map((t) => Buffer.from(t, 'base64url').equals(Buffer.from(signature, 'base64url')))).toEqual([
      true,
      true,
      true,
    ]);
    for (const twin of twins)
      expect(
        problem(() => verifyAckToken(`${payload}.${twin}`, { current: KEY }, NOW)),
        twin,
      ).toBe('forged');
  });

  it('expires at exp', () => {
    const token = signAckToken(claims, { current: KEY });
    expect(problem(() => verifyAckToken(token, { current: KEY }, claims.expiresAt * 1000 - 1))).toBe('accepted');
    expect(problem(() => verifyAckToken(token, { current: KEY }, claims.expiresAt * 1000))).toBe('expired');
  });

  it('accepts the previous key until its grace period ends, then calls it retired', () => {
    const oldToken = signAckToken(claims, { current: OLD });
    const keys: SigningKeys = { current: KEY, previous: { secret: OLD, untilMs: NOW + 60_000 } };
    expect(verifyAckToken(oldToken, keys, NOW)).toEqual(claims);
    expect(problem(() => verifyAckToken(oldToken, keys, NOW + 60_000))).toBe('retired');
    expect(verifyAckToken(signAckToken(claims, keys), keys, NOW + 60_000)).toEqual(claims);
    expect(problem(() => verifyAckToken(oldToken, { current: KEY }, NOW))).toBe('forged');
  });

  it('maps problems to 4xx statuses', () => {
    expect(TOKEN_PROBLEM_STATUS).toEqual({ malformed: 400, forged: 403, expired: 410, retired: 410 });
  });

  it('caps fingerprints and digests long group keys', () => {
    const many = {
      ...claims,
      fingerprints: Array.from({ length: MAX_TOKEN_ALERTS + 10 }, (_, i) => `f${i}`),
      group: 'g'.repeat(500),
    };
    const verified = verifyAckToken(signAckToken(many, { current: KEY }), { current: KEY }, NOW);
    expect(verified.fingerprints).toHaveLength(MAX_TOKEN_ALERTS);
    expect(verified.group).toBe(tokenGroup('g'.repeat(500)));
    expect(verified.group).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(() => signAckToken({ ...claims, fingerprints: [] }, { current: KEY })).toThrow(/at least one/);
  });
});

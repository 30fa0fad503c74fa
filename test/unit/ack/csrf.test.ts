import { describe, expect, it } from 'vitest';
import { checkFormNonce, checkOrigin, issueFormNonce } from '../../../shared/ack/csrf.js';
import { Secret } from '../../../shared/core/secret.js';

const KEY = new Secret('current-ack-secret-0123456789abcdef');
const OLD = new Secret('previous-ack-secret-0123456789abcdef');
const NOW = 1_800_000_000_000;

describe('form nonce', () => {
  it("accepts the page's own nonce with its cookie, and nothing else", () => {
    const form = issueFormNonce('tok', { current: KEY });
    expect(form.nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(checkFormNonce({ ...form, cookie: form.nonce }, 'tok', { current: KEY }, NOW)).toBeUndefined();
    expect(checkFormNonce({ ...form }, 'tok', { current: KEY }, NOW)).toMatch(/cookie/);
    expect(checkFormNonce({ ...form, cookie: 'other' }, 'tok', { current: KEY }, NOW)).toMatch(/cookie/);
    expect(checkFormNonce({ cookie: form.nonce }, 'tok', { current: KEY }, NOW)).toMatch(/not sent from/);
    expect(checkFormNonce({ ...form, cookie: form.nonce }, 'another-token', { current: KEY }, NOW)).toMatch(
      /does not belong/,
    );
    expect(checkFormNonce({ nonce: 'n', mac: 'forged', cookie: 'n' }, 'tok', { current: KEY }, NOW)).toMatch(
      /does not belong/,
    );
  });

  it('accepts pages rendered under the previous key during its grace period only', () => {
    const form = issueFormNonce('tok', { current: OLD });
    const keys = { current: KEY, previous: { secret: OLD, untilMs: NOW + 1 } };
    expect(checkFormNonce({ ...form, cookie: form.nonce }, 'tok', keys, NOW)).toBeUndefined();
    expect(checkFormNonce({ ...form, cookie: form.nonce }, 'tok', keys, NOW + 1)).toMatch(/does not belong/);
  });
});

describe('origin check', () => {
  const own = ['https://ack.example.com'];
  it('allows same-origin posts and posts without metadata', () => {
    expect(checkOrigin({ origin: 'https://ack.example.com', secFetchSite: 'same-origin' }, own)).toBeUndefined();
    expect(checkOrigin({}, own)).toBeUndefined();
  });
  it('refuses other sites by Origin or Sec-Fetch-Site, and opaque origins', () => {
    expect(checkOrigin({ origin: 'https://evil.example.net' }, own)).toMatch(/another site/);
    expect(checkOrigin({ secFetchSite: 'cross-site' }, own)).toMatch(/cross-site/);
    expect(checkOrigin({ origin: 'https://ack.example.com', secFetchSite: 'same-site' }, own)).toMatch(/same-site/);
    expect(checkOrigin({ origin: 'null' }, own)).toMatch(/opaque/);
  });
  it('allows `Origin: null` only with `Sec-Fetch-Site: same-origin` (a proxy adding `Referrer-Policy: no-referrer`)', () => {
    expect(checkOrigin({ origin: 'null', secFetchSite: 'same-origin' }, own)).toBeUndefined();
    for (const secFetchSite of [undefined, 'none', 'same-site', 'cross-site', 'Same-Origin', 'same-origin, cross-site'])
      expect(checkOrigin({ origin: 'null', secFetchSite }, own), String(secFetchSite)).toBeDefined();
  });
});

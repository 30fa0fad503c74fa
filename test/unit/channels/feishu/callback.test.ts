import { describe, expect, it } from 'vitest';
import {
  decryptFeishu,
  feishuCallbackSignature,
  verifyFeishuCallback,
} from '../../../../shared/channels/feishu/callback.js';
import { Secret } from '../../../../shared/core/secret.js';
import { feishuCallbackRequest, signedHeaders } from '../../../helpers/feishu-api.js';

const KEY = 'feishu-encrypt-key-0123456789';
const TOKEN = 'verification-token-01';
const settings = { encryptKey: new Secret(KEY), verificationToken: new Secret(TOKEN) };
const NOW = 1_796_083_200_000;
const nowS = NOW / 1000;
const event = (eventId = 'ev-1', token = TOKEN) => ({
  schema: '2.0',
  header: { event_id: eventId, token, event_type: 'card.action.trigger', app_id: 'cli_fake' },
  event: { action: { value: { action: 'acknowledge', token: 'x' } } },
});
const headersOf = (r: { headers: Record<string, string> }) => ({
  timestamp: r.headers['x-lark-request-timestamp'],
  nonce: r.headers['x-lark-request-nonce'],
  signature: r.headers['x-lark-signature'],
});

describe('Feishu callback verification', () => {
  it('decrypts Feishu\'s documented example (key "test key")', () => {
    expect(decryptFeishu('P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=', new Secret('test key'))).toBe('hello world');
  });

  it('signs as documented: hex sha256 of timestamp + nonce + key + raw body', () => {
    // printf '%s' '1700000000noncekey{}' | sha256sum
    expect(feishuCallbackSignature('1700000000', 'nonce', new Secret('key'), '{}')).toBe(
      'eeea17a251c07ba68b1862fc89789a3b57aab829e96b602697a8f3f58da564e4',
    );
    const request = feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS, nonce: 'n1' });
    expect(request.headers['x-lark-signature']).toBe(
      feishuCallbackSignature(String(nowS), 'n1', new Secret(KEY), request.body),
    );
  });

  it('accepts a signed, encrypted callback within 5 minutes, with its token', () => {
    for (const skew of [-300, 0, 300]) {
      const r = feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS + skew });
      expect(verifyFeishuCallback(headersOf(r), r.body, settings, NOW)).toMatchObject({
        kind: 'event',
        eventId: 'ev-1',
        eventType: 'card.action.trigger',
        appId: 'cli_fake',
      });
    }
  });

  it('refuses stale, forged, altered, unsigned, unencrypted, wrongly keyed and wrong-token callbacks', () => {
    const problem = (r: { body: string; headers: Record<string, string> }, s = settings) =>
      (verifyFeishuCallback(headersOf(r), r.body, s, NOW) as { problem?: string }).problem;
    expect(problem(feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS - 301 }))).toMatch(/5 minutes/);
    expect(problem(feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS + 301 }))).toMatch(/5 minutes/);
    expect(problem(feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS, signWith: 'other-key' }))).toMatch(
      /does not match/,
    );
    const good = feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS });
    expect(problem({ ...good, body: good.body.replace('"}', ' "}') })).toMatch(/does not match/);
    expect(problem({ body: good.body, headers: {} })).toMatch(/missing X-Lark-Signature/);
    const plain = JSON.stringify(event());
    expect(problem({ body: plain, headers: signedHeaders(plain, KEY, { timestampSeconds: nowS }) })).toMatch(
      /not encrypted/,
    );
    // Encrypted with another key, signed with ours (only someone holding the key could sign it).
    const otherKey = feishuCallbackRequest(event(), 'another-encrypt-key-000', { timestampSeconds: nowS });
    const resigned = { body: otherKey.body, headers: signedHeaders(otherKey.body, KEY, { timestampSeconds: nowS }) };
    expect(problem(resigned)).toMatch(/does not decrypt/);
    expect(problem(feishuCallbackRequest(event('ev-1', 'wrong'), KEY, { timestampSeconds: nowS }))).toMatch(
      /Verification Token/,
    );
  });

  it('refuses everything without FEISHU_ENCRYPT_KEY', () => {
    const r = feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS });
    expect(verifyFeishuCallback(headersOf(r), r.body, {}, NOW)).toEqual({
      problem: expect.stringMatching(/FEISHU_ENCRYPT_KEY is not set/),
    });
  });

  it('answers the url_verification challenge, which Feishu sends encrypted and unsigned', () => {
    const challenge = { challenge: 'c-123', token: TOKEN, type: 'url_verification' };
    const r = feishuCallbackRequest(challenge, KEY, { timestampSeconds: nowS });
    expect(verifyFeishuCallback({}, r.body, settings, NOW)).toEqual({ kind: 'challenge', challenge: 'c-123' });
    const wrong = feishuCallbackRequest({ ...challenge, token: 'nope' }, KEY, { timestampSeconds: nowS });
    expect(verifyFeishuCallback({}, wrong.body, settings, NOW)).toHaveProperty('problem');
    // Unsigned is allowed only for the challenge.
    expect(
      verifyFeishuCallback({}, feishuCallbackRequest(event(), KEY, { timestampSeconds: nowS }).body, settings, NOW),
    ).toHaveProperty('problem');
  });
});

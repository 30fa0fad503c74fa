import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../shared/core/logger.js';
import { redactSecrets, Secret } from '../../../shared/core/secret.js';

const URL_TEXT = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX';
const PATH = '/services/T000/B000/XXXXXXXX';

/** Every way the webhook URL's credential shows up in a proxy page, a platform reply or an error message. */
const LEAKS = [
  URL_TEXT,
  PATH,
  PATH.slice(1),
  'XXXXXXXX',
  encodeURIComponent(URL_TEXT),
  encodeURIComponent(URL_TEXT).toLowerCase(),
  encodeURIComponent(PATH),
  encodeURIComponent(PATH.slice(1)),
  URL_TEXT.replaceAll('/', '\\/'),
  `hooks.slack.com${PATH}`,
];

/** The credential, in any of the forms above, is still in `text`. */
const leaks = (text: string) => /xxxxxxxx/i.test(text);

describe('Secret', () => {
  new Secret(URL_TEXT);

  it('prints as <redacted> everywhere', () => {
    const secret = new Secret(URL_TEXT);
    expect(`${secret}`).toBe('<redacted>');
    expect(JSON.stringify({ secret })).toBe('{"secret":"<redacted>"}');
    expect(inspect({ secret })).not.toContain('XXXX');
  });

  it.each(LEAKS)('is scrubbed from text in the form %s', (leak) => {
    const text = redactSecrets(`POST ${leak} → 404 no_service`);
    expect(leaks(text)).toBe(false);
    expect(text).toMatch(/^POST .*<redacted>.* → 404 no_service$/);
  });

  it('leaves the public parts and ordinary words alone', () => {
    new Secret('https://proxy.example.com/notify/escalation');
    const text = 'hooks.slack.com answered 404 no_service for services of T000; escalation off';
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets('POST /notify/escalation failed')).toBe('POST <redacted> failed');
  });

  it('leaves a one-word path alone as a word, scrubbing it with its slash (a loopback or proxy stand-in URL)', () => {
    new Secret('http://127.0.0.1:9001/platform');
    new Secret('http://127.0.0.1:9002/escalation');
    const text = '{"type":"escalation scheduled","targets":["platform-slack"]}';
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets('POST /escalation → 500')).toBe('POST <redacted> → 500');
    expect(redactSecrets('to http://127.0.0.1:9001/platform')).toBe('to <redacted>');
  });

  it('scrubs a secret that is not a URL, but not one too short to be a credential', () => {
    new Secret('feishu-signing-secret-42');
    new Secret('abc');
    expect(redactSecrets('sign with feishu-signing-secret-42 failed')).toBe('sign with <redacted> failed');
    expect(redactSecrets('abc def')).toBe('abc def');
  });

  it('scrubs the credential query parameter of a webhook URL', () => {
    new Secret('https://oapi.dingtalk.example/robot/send?access_token=0123456789abcdef');
    expect(redactSecrets('GET /robot/send?access_token=0123456789abcdef 403')).not.toContain('0123456789abcdef');
  });

  it('scrubs a query value as written, percent-decoded with its + kept, and form-decoded', () => {
    new Secret('https://hooks.example.com/hook/abcdefgh?key=AbC+dEf/GhI%3D%3Dxyz12');
    for (const echoed of [
      '{"key":"AbC+dEf/GhI==xyz12"}',
      'key: AbC+dEf/GhI%3D%3Dxyz12',
      'key AbC dEf/GhI==xyz12',
      'key=AbC%2BdEf%2FGhI%3D%3Dxyz12',
    ])
      expect(redactSecrets(echoed), echoed).not.toMatch(/GhI/);
  });
});

describe('redactSecrets with very long secrets', () => {
  it('scrubs a 100 KB secret and its encodings beside the others, and never throws the pattern', () => {
    const token = `SEKRIT${'a'.repeat(100_000)}`;
    new Secret(token);
    new Secret('tok_abcdefghijklmnop1234');
    const text = `a ${token} b ${Buffer.from(token).toString('base64')} c tok_abcdefghijklmnop1234 d`;
    let out = '';
    expect(() => (out = redactSecrets(text))).not.toThrow();
    expect(out).not.toContain('SEKRIT');
    expect(out).not.toContain('tok_abcdefghijklmnop1234');
    expect(out.startsWith('a <redacted> b ')).toBe(true);
    expect(out.endsWith(' c <redacted> d')).toBe(true);
  });
});

describe('logger', () => {
  it('scrubs every registered secret from every field, error messages included', () => {
    const lines: string[] = [];
    const log = createLogger('debug', (line) => lines.push(line)).child({ receiver: `r ${PATH}` });
    log.error('channel failed', {
      error: new TypeError(`fetch failed: POST ${URL_TEXT}`),
      body: `<html>No route for POST ${PATH.slice(1)}</html>`,
      nested: { list: [encodeURIComponent(URL_TEXT), { deep: URL_TEXT.replaceAll('/', '\\/') }] },
    });
    log.info(`event naming ${URL_TEXT}`);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(leaks(line)).toBe(false);
    const parsed = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      level: 'error',
      event: 'channel failed',
      error: { name: 'TypeError', message: 'fetch failed: POST <redacted>' },
    });
  });
});

/**
 * The PagerDuty settings as `loadConfig` checks them at start: `PAGERDUTY_ROUTING_KEY` (a secret:
 * redacted everywhere, readable from the settings secret), `PAGERDUTY_EVENTS_URL` (https, or http to
 * loopback), and the routing file's `pagerduty` instances.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildChannels } from '../../../../shared/runtime/channels.js';
import { loadConfig } from '../../../../shared/runtime/config.js';
import { createLogger } from '../../../../shared/core/logger.js';
import { routingSecretNames } from '../../../../shared/routing/load.js';
import { redactSecrets } from '../../../../shared/core/secret.js';
import { SECRET_SETTINGS, withSecretSettings } from '../../../../shared/runtime/settings-secret.js';
import { envChannel, configProblems as problems } from '../../../helpers/config.js';

const KEY = 'e93facc04764012d7bfb002500d5d1a6';
const dir = mkdtempSync(join(tmpdir(), 'pd-routing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PagerDuty settings', () => {
  it('PAGERDUTY_ROUTING_KEY turns the pagerduty channel on; the key prints redacted and is scrubbed from any text', () => {
    const config = loadConfig({ PAGERDUTY_ROUTING_KEY: KEY });
    expect(buildChannels(config).map((c) => c.name)).toEqual(['pagerduty']);
    const routingKey = envChannel(config, 'pagerduty')?.routingKey;
    expect(routingKey?.reveal()).toBe(KEY);
    const printed = [JSON.stringify(config), inspect(config, { depth: 5 }), `${routingKey}`].join('\n');
    expect(printed).not.toContain(KEY);
    expect(redactSecrets(`PagerDuty said: unknown routing_key ${KEY} (${encodeURIComponent(KEY)})`)).toBe(
      'PagerDuty said: unknown routing_key <redacted> (<redacted>)',
    );
    const lines: string[] = [];
    createLogger('info', (l) => lines.push(l)).error('channel refused content', { error: `HTTP 400: ${KEY}` });
    expect(lines.join('\n')).not.toContain(KEY);
  });

  it('names a malformed routing key without echoing it', () => {
    for (const bad of [
      'https://events.pagerduty.com/v2/enqueue',
      `${KEY}x`,
      'u+sdfgh5431jhg87654dfghj34gfhjk-',
      KEY.slice(0, 31),
    ]) {
      const found = problems({ PAGERDUTY_ROUTING_KEY: bad });
      expect(found).toEqual([
        expect.stringMatching(/^PAGERDUTY_ROUTING_KEY: must be the 32-character integration key/),
      ]);
      expect(found.join('\n')).not.toContain(bad);
    }
  });

  it('PAGERDUTY_EVENTS_URL is checked at start like the other URLs: https, or http to loopback', () => {
    const eventsUrl = (url: string) =>
      envChannel(loadConfig({ PAGERDUTY_ROUTING_KEY: KEY, PAGERDUTY_EVENTS_URL: url }), 'pagerduty')?.eventsUrl;
    expect(eventsUrl('http://127.0.0.1:9/v2/enqueue')).toBe('http://127.0.0.1:9/v2/enqueue');
    expect(eventsUrl('https://events.eu.pagerduty.com/v2/enqueue')).toBe('https://events.eu.pagerduty.com/v2/enqueue');
    expect(problems({ PAGERDUTY_EVENTS_URL: 'http://events.pagerduty.com/v2/enqueue' })).toEqual([
      'PAGERDUTY_EVENTS_URL: must be an https URL (http only to loopback)',
    ]);
    expect(problems({ PAGERDUTY_EVENTS_URL: 'events.pagerduty.com' })).toEqual([
      'PAGERDUTY_EVENTS_URL: must be an https URL',
    ]);
  });

  it('the settings secret may hold PAGERDUTY_ROUTING_KEY and the routing file’s routing keys', async () => {
    expect(SECRET_SETTINGS).toContain('PAGERDUTY_ROUTING_KEY');
    const routing = join(dir, 'secret.yml');
    writeFileSync(
      routing,
      'channels:\n  gpu-pager: { type: pagerduty, routingKey: { secret: PD_GPU_KEY } }\ndefault: { channels: [gpu-pager] }\n',
    );
    const client = {
      send: async () => ({
        SecretString: JSON.stringify({ PAGERDUTY_ROUTING_KEY: KEY, PD_GPU_KEY: KEY.toUpperCase() }),
      }),
    };
    const env = await withSecretSettings(
      { SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s', ROUTING_FILE: routing },
      client as never,
    );
    expect(env).toMatchObject({ PAGERDUTY_ROUTING_KEY: KEY, PD_GPU_KEY: KEY.toUpperCase() });
    expect(routingSecretNames(routing)).toEqual(['PD_GPU_KEY']);
  });

  it('a routing file declares pagerduty instances, one routing key setting each, checked at start', () => {
    const routing = join(dir, 'routing.yml');
    writeFileSync(
      routing,
      [
        'channels:',
        '  gpu-pager: { type: pagerduty, routingKey: { secret: PD_GPU_KEY }, digestAbove: 20 }',
        '  llm-pager: { type: pagerduty, routingKey: { secret: PD_LLM_KEY } }',
        'default: { channels: [gpu-pager, llm-pager, pagerduty] }',
      ].join('\n'),
    );
    const config = loadConfig({
      ROUTING_FILE: routing,
      PAGERDUTY_ROUTING_KEY: KEY,
      PD_GPU_KEY: KEY.toUpperCase(),
      PD_LLM_KEY: KEY.replace(/e/g, 'f'),
    });
    expect(buildChannels(config).map((c) => c.name)).toEqual(['pagerduty', 'gpu-pager', 'llm-pager']);
    const found = problems({ ROUTING_FILE: routing, PD_GPU_KEY: 'not-a-key', PD_LLM_KEY: '' });
    expect(found).toEqual([
      `ROUTING_FILE: ${routing}:4: default.channels[2]: no channel named "pagerduty" (known: gpu-pager, llm-pager)`,
      `ROUTING_FILE: ${routing}:2: channels.gpu-pager.routingKey: setting PD_GPU_KEY must be the 32-character integration key (routing key) of an Events API v2 integration (letters and digits)`,
      `ROUTING_FILE: ${routing}:3: channels.llm-pager.routingKey: setting PD_LLM_KEY is not set (an environment variable, or a key of the settings secret in AWS)`,
    ]);
    writeFileSync(routing, `channels:\n  p: { type: pagerduty, routingKey: ${KEY} }\ndefault: { channels: [p] }\n`);
    expect(problems({ ROUTING_FILE: routing })[0]).toMatch(
      /channels\.p\.routingKey: must be \{ secret: SETTING_NAME \}/,
    );
  });
});

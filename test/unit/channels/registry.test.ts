/**
 * The registry is the one list of channel types: every type's environment variables reach the
 * configuration's settings, its secret ones the settings secret (and so the CDK stack's secret, whose
 * description is `SECRET_SETTINGS`: test/infra/stack.test.ts), and docs/settings.md's tables, without
 * any of them naming the type. Checked type by type, so a failure names the type whose settings are missing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNEL_ENV, CHANNEL_TYPES, ENV_CHANNEL_NAMES } from '../../../shared/channels/registry.js';
import { loadConfig, SETTING_NAMES } from '../../../shared/runtime/config.js';
import { FULL_ENV, SLACK_APP_ENV } from '../../helpers/full-env.js';
import { SECRET_SETTINGS, withSecretSettings } from '../../../shared/runtime/settings-secret.js';
import { codeSpans, ROOT, tableRows } from '../../helpers/docs.js';

const SETTINGS_DOC = readFileSync(join(ROOT, 'docs/settings.md'), 'utf8');
/** The names in the first cells of docs/settings.md's tables headed `header`. */
const documented = (header: string) =>
  new Set(tableRows(SETTINGS_DOC, header).flatMap((row) => codeSpans(row.cells[0]!)));

const withEnv = Object.entries(CHANNEL_TYPES).flatMap(([type, t]) =>
  'env' in t ? [{ type, variables: Object.keys(t.env.variables), secrets: [...t.env.secrets] }] : [],
);

describe('every channel type of the registry', () => {
  it('includes types configured by environment variables', () => {
    expect(withEnv.map((t) => t.type)).toEqual(expect.arrayContaining(['slack', 'feishu', 'pagerduty']));
  });

  it.each(withEnv)('$type: its variables are settings, its secrets secret settings', ({ variables, secrets }) => {
    expect(variables.filter((v) => !SETTING_NAMES.includes(v))).toEqual([]);
    expect(secrets.filter((s) => !SECRET_SETTINGS.includes(s))).toEqual([]);
  });

  it.each(withEnv)('$type: docs/settings.md lists its variables and its secret ones', ({ variables, secrets }) => {
    const settings = documented('Setting');
    const secretSettings = documented('Secret setting');
    expect(variables.filter((v) => !settings.has(v))).toEqual([]);
    expect(secrets.filter((s) => !secretSettings.has(s))).toEqual([]);
  });

  it('no two types, and no type and the service, read the same setting (one schema would silently win)', () => {
    const twice = (names: readonly string[]) => names.filter((name, i) => names.indexOf(name) !== i);
    // The registry's schema is one object: a variable of two types is one key there, so count the declarations.
    expect(twice(withEnv.flatMap((t) => t.variables))).toEqual([]);
    expect(twice(SETTING_NAMES)).toEqual([]);
  });
});

describe('the settings secret', () => {
  it("lays every type's secret variables over the environment, and no other variable of theirs", async () => {
    const all = Object.keys(CHANNEL_ENV.schema.shape);
    const secret = JSON.stringify(Object.fromEntries(all.map((name) => [name, `value of ${name}`])));
    const env = await withSecretSettings({ SETTINGS_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:s' }, {
      send: async () => ({ SecretString: secret }),
    } as never);
    const laid = all.filter((name) => env[name] !== undefined);
    expect(laid).toEqual(withEnv.flatMap((t) => t.secrets));
    for (const name of laid) expect(env[name]).toBe(`value of ${name}`);
  });
});

describe('ENV_CHANNEL_NAMES (what a routing file may route to before the settings are known)', () => {
  it("holds exactly the names the environment's channels take, every type configured", () => {
    const names = [FULL_ENV, SLACK_APP_ENV].flatMap((env) => {
      const { ROUTING_FILE: _routing, ...plain } = env;
      return loadConfig(plain).envChannels.map((c) => c.name);
    });
    expect([...new Set(names)].sort()).toEqual([...ENV_CHANNEL_NAMES].sort());
  });
});

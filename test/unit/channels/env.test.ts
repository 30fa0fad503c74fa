/**
 * `channelEnv`, on a registry made up here: what the configuration and the settings secret read comes from
 * each type's declaration, in registry order, so a type added to the registry needs nothing else.
 */
import { describe, expect, it } from 'vitest';
import * as z from '../../../shared/core/zod.js';
import { optional, requires } from '../../../shared/core/settings.js';
import { channelEnv, envSettings, ifSet } from '../../../shared/channels/env.js';

interface Made {
  name: string;
  url: string;
}

const echo = envSettings({
  variables: {
    ECHO_URL: optional(z.string()),
    ESCALATION_ECHO_URL: optional(z.string()),
    ECHO_MODE: optional(z.string()),
  },
  secrets: ['ECHO_URL', 'ESCALATION_ECHO_URL'],
  problems: (v) => requires(v, 'ECHO_MODE', 'ECHO_URL'),
  read: (
    v,
  ): { channels: (Made | undefined)[]; escalation: Record<string, Made | undefined>; options?: { mode: string } } => ({
    channels: [ifSet(v.ECHO_URL, (url) => ({ name: 'echo', url }))],
    escalation: { ESCALATION_ECHO_URL: ifSet(v.ESCALATION_ECHO_URL, (url) => ({ name: 'escalation-echo', url })) },
    ...(v.ECHO_MODE && { options: { mode: v.ECHO_MODE } }),
  }),
});
const beep = envSettings({
  variables: { BEEP_URL: optional(z.string()) },
  secrets: [],
  read: (v) => ({ channels: [ifSet(v.BEEP_URL, (url) => ({ name: 'beep', url }))] }),
});
const registry = { beep: { schema: null, env: beep }, silent: { schema: null }, echo: { schema: null, env: echo } };
const env = channelEnv<Made, { echo?: { mode: string } }>(registry);

describe('channelEnv', () => {
  it("takes every type's variables and secrets, in registry order; a type without variables adds none", () => {
    expect(Object.keys(env.schema.shape)).toEqual(['BEEP_URL', 'ECHO_URL', 'ESCALATION_ECHO_URL', 'ECHO_MODE']);
    expect(env.secrets).toEqual(['ECHO_URL', 'ESCALATION_ECHO_URL']);
  });

  it('yields the channels, escalation targets (with their setting) and options of every type, unset ones skipped', () => {
    const values = { BEEP_URL: 'b', ESCALATION_ECHO_URL: 'e', ECHO_URL: 'u', ECHO_MODE: 'loud' };
    expect(env.read(env.schema.parse(values), values)).toEqual({
      channels: [
        { name: 'beep', url: 'b' },
        { name: 'echo', url: 'u' },
      ],
      escalation: [{ setting: 'ESCALATION_ECHO_URL', instance: { name: 'escalation-echo', url: 'e' } }],
      options: { echo: { mode: 'loud' } },
      problems: [],
    });
    expect(env.read(env.schema.parse({}), {})).toEqual({ channels: [], escalation: [], options: {}, problems: [] });
  });

  it("collects each type's problems of variables that only make sense together", () => {
    const values = { ECHO_MODE: 'loud' };
    expect(env.read(env.schema.parse(values), values).problems).toEqual([
      expect.stringMatching(/^ECHO_MODE: set, but ECHO_URL is not/),
    ]);
  });
});

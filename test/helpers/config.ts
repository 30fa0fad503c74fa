/** Test helper: the problems `loadConfig` reports for an environment that must be refused. */
import { expect } from 'vitest';
import type { ChannelInstance } from '../../shared/channels/registry.js';
import { type Config, ConfigError, loadConfig } from '../../shared/runtime/config.js';

/**
 * @returns the `ConfigError`'s problems, one per bad setting
 * @throws when `env` is accepted, or refused with anything but a `ConfigError`
 */
export function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error(`expected a ConfigError for ${Object.keys(env).join(', ')}`);
}

/** The channel of `type` the environment configures (`SLACK_WEBHOOK_URL`: `slack`, …), if any. */
export function envChannel<T extends ChannelInstance['type']>(
  config: Config,
  type: T,
): Extract<ChannelInstance, { type: T }> | undefined {
  return config.envChannels.find((c): c is Extract<ChannelInstance, { type: T }> => c.type === type);
}

/** Test helper: the problems `loadConfig` reports for an environment that must be refused. */
import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/runtime/config.js';

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

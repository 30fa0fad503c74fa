/**
 * Building blocks of environment settings, shared by the service's own (`shared/runtime/config.ts`) and
 * each channel type's (`shared/channels/<type>/settings.ts`). A setting's schema reads the raw string;
 * `loadConfig` prefixes each message with the setting's name (`SLACK_WEBHOOK_URL: must be an https URL`)
 * and never echoes the value.
 */
import * as z from './zod.js';
import { Secret } from './secret.js';

/** Unset or `""`: unset. */
export const optional = <T extends z.ZodMiniType>(schema: T) =>
  z.pipe(
    z.transform((v) => (v === '' ? undefined : v)),
    z.optional(schema),
  );

/** A string matching `pattern`; `message` otherwise. */
export const matching = (pattern: RegExp, message: string) => z.string().check(z.regex(pattern, { message }));

/** A string of at least `min` characters; `message` otherwise. */
export const atLeast = (min: number, message: string) => z.string().check(z.minLength(min, { message }));

/** The value as a {@link Secret} (it prints as `<redacted>`); unset stays unset. */
export const secretOf = (value: string | undefined): Secret | undefined =>
  value === undefined ? undefined : new Secret(value);

/**
 * `NAME: set, but OTHER is not` when `values[name]` is set and `values[other]` is not, else nothing.
 * @param why appended in parentheses: what the two have to do with each other
 */
export function requires(values: Record<string, unknown>, name: string, other: string, why?: string): string[] {
  if (!values[name] || values[other]) return [];
  return [`${name}: set, but ${other} is not${why ? ` (${why})` : ''}`];
}

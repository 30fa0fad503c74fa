/**
 * Settings that look like ours but are not: a mistyped name (`SLACK_WEBHOK_URL`, `PROMETHEUS_URI`) is
 * otherwise silently ignored, and the feature it was meant to turn on is simply off. A name is reported
 * when it starts like a family of our settings (`SLACK_`, `PROMETHEUS_`, … — a prefix at least two of our
 * settings share, so `LOG_`, `TABLE_` or other software's `NODE_`, `AWS_` never warn) and is not one of them.
 * Reported as start-up warnings that name the setting and its family, never a value.
 */
import type { SettingWarning } from './settings-whitespace.js';

/** At most this many of the family's names are listed in one warning. */
const LISTED = 6;

/**
 * @param env the settings as read (environment, with the settings secret laid over it in AWS)
 * @param known every setting the service reads (its schemas' and the routing file's secrets)
 * @returns one warning per unknown name in a family of known ones, in name order
 */
export function unknownSettings(env: Record<string, string | undefined>, known: readonly string[]): SettingWarning[] {
  const knownSet = new Set(known);
  const families = new Map<string, string[]>();
  for (const name of knownSet) {
    const family = familyOf(name);
    if (family) families.set(family, [...(families.get(family) ?? []), name]);
  }
  const warnings: SettingWarning[] = [];
  for (const name of Object.keys(env).sort()) {
    if (knownSet.has(name) || env[name] === undefined) continue;
    const family = familyOf(name);
    const members = family ? families.get(family) : undefined;
    if (!members || members.length < 2) continue;
    const listed = members.sort().slice(0, LISTED).join(', ') + (members.length > LISTED ? ', …' : '');
    warnings.push({
      setting: name,
      problem: `not a setting this service reads, so it is ignored; a typo? The ${family}… settings are ${listed} (docs/settings.md)`,
    });
  }
  return warnings;
}

/** `SLACK_` for `SLACK_WEBHOOK_URL`; `undefined` for a name without an underscore. */
function familyOf(name: string): string | undefined {
  const end = name.indexOf('_');
  return end > 0 ? name.slice(0, end + 1) : undefined;
}

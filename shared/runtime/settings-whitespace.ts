/**
 * Surrounding whitespace in settings. A value pasted with a space, or read from a file with its
 * trailing newline (`kubectl create secret --from-file`, `$(cat token)`, a Secrets Manager value typed
 * with Enter), would otherwise be used as is: a Feishu signature or a link signed over the wrong bytes,
 * a bearer token that never matches, a link that ends in `%0A`. No setting of ours means anything by
 * surrounding whitespace, so it is removed, and each setting it was removed from is named in a
 * warning (never its value), so the operator can fix the source.
 */

/** One adjusted setting, for the start-up log. */
export interface SettingWarning {
  /** The setting's name, e.g. `ACK_SECRET`. */
  setting: string;
  /** What was done; never contains the value. */
  problem: string;
}

/**
 * @param env the settings as read (environment, with the settings secret laid over it in AWS)
 * @param names the settings to trim and report; other keys are passed through untouched
 * @returns a copy of `env` with those settings trimmed (`String.prototype.trim`: spaces, tabs, CR/LF,
 *   Unicode spaces and a byte-order mark), and one warning per setting that changed
 */
export function trimSettings(
  env: Record<string, string | undefined>,
  names: Iterable<string>,
): { settings: Record<string, string | undefined>; warnings: SettingWarning[] } {
  const settings = { ...env };
  const warnings: SettingWarning[] = [];
  for (const name of new Set(names)) {
    const value = env[name];
    if (value === undefined || value === value.trim()) continue;
    const trimmed = value.trim();
    settings[name] = trimmed;
    warnings.push({
      setting: name,
      problem:
        trimmed === ''
          ? 'contains only whitespace; treated as unset'
          : 'surrounding whitespace (a trailing newline from a file?) removed; remove it where the setting is defined',
    });
  }
  return { settings, warnings };
}

/** Whether a value is empty once trimmed (the settings secret skips such keys, as the environment's empty ones). */
export const isBlank = (value: string) => value.trim() === '';

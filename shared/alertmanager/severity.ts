/**
 * The one severity mapping: how the `severity` label's many spellings read as one of four levels.
 * Rule files spell the same thing many ways (`critical`, `Critical`, `CRITICAL`, `page`, `P1`, `sev1`),
 * so every reader of the label goes through this table — escalation (`shared/escalation/escalates.ts`),
 * PagerDuty's `payload.severity`, Feishu's header colour, the headline's "most severe" and the storm
 * digest's order — and they cannot disagree about one alert. The levels are PagerDuty's four (its Common
 * Event Format), which most tools' scales fold into.
 *
 * The label itself is never changed: messages show it as the rule wrote it; only decisions (escalate or
 * not, colour, rank, PagerDuty's field) use the level. The table is documented in `docs/messages.md`.
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#pagerduty-common-event-format-pd-cef
 */

/** The four levels, most severe first. */
export type SeverityLevel = 'critical' | 'error' | 'warning' | 'info';

/**
 * Spellings of each level seen in rule files, compared after {@link normalise} (lower case, without
 * spaces, `-` and `_`: `SEV-1`, `sev_1` and `Sev 1` are `sev1`). A word in no list is no level.
 */
export const SEVERITY_WORDS: Readonly<Record<SeverityLevel, readonly string[]>> = {
  critical: ['critical', 'crit', 'fatal', 'emergency', 'emerg', 'page', 'p0', 'p1', 'sev0', 'sev1', 'disaster'],
  error: ['error', 'err', 'high', 'major', 'p2', 'sev2'],
  warning: ['warning', 'warn', 'medium', 'minor', 'average', 'p3', 'sev3'],
  info: ['info', 'informational', 'notice', 'low', 'none', 'ok', 'debug', 'p4', 'p5', 'sev4', 'sev5'],
};

const LEVEL_OF = new Map(
  Object.entries(SEVERITY_WORDS).flatMap(([level, words]) => words.map((w) => [w, level as SeverityLevel])),
);

/** Rank of each level, for "most severe": critical 4 … info 1; no level 0. */
export const SEVERITY_LEVEL_RANK: Readonly<Record<SeverityLevel, number>> = {
  critical: 4,
  error: 3,
  warning: 2,
  info: 1,
};

const normalise = (label: string) =>
  label
    .trim()
    .toLowerCase()
    .replace(/[\s_-]+/g, '');

/**
 * The level a `severity` label value names, by {@link SEVERITY_WORDS}.
 * @returns `undefined` for a missing, empty or unknown value (each reader says what that means: PagerDuty
 *   sends `error`, escalation does not escalate)
 * @example severityLevel('Critical') // 'critical'; severityLevel('P1') // 'critical'; severityLevel('bogus') // undefined
 */
export function severityLevel(label: string | undefined): SeverityLevel | undefined {
  return label === undefined ? undefined : LEVEL_OF.get(normalise(label));
}

/** {@link SEVERITY_LEVEL_RANK} of a label value's level; 0 when it names none. */
export function severityRank(label: string | undefined): number {
  const level = severityLevel(label);
  return level ? SEVERITY_LEVEL_RANK[level] : 0;
}

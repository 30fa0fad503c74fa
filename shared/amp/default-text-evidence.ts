/**
 * What the rest of an AMP default-text message says about its alerts, held against what was read.
 * The text's values may hold line breaks, so a value can write lines shaped like the template's own
 * (`default-text.ts` reads every such line as structure, so a value can only add structure, never hide
 * any). What was added shows here, in the parts of the message the alert list does not write:
 * - the default subject (`sns.default.subject`): `[FIRING:<n>] <group label values> (<other common
 *   label values>)` — the firing count, and the values of the labels every alert shares;
 * - the opening line: the values of the annotations every alert shares, sorted by name, joined by " ";
 * - Alertmanager never sends one alert twice in a group.
 * A check that cannot apply (a subject of one's own, a message AMP cut) is skipped; what remains
 * unverifiable is said in docs/security.md.
 * @see https://github.com/prometheus/alertmanager/blob/v0.25.0/template/default.tmpl (`__subject`, `sns.default.message`)
 */
import { labelSetFingerprint } from '../alertmanager/fingerprint.js';

/** What one alert of the text was read as. */
export interface ReadAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface Evidence {
  /** The text before the first section header (the common annotation values). */
  opening: string;
  /** The SNS `Subject`, when there is one. */
  subject?: string;
  /** AMP cut the message: the last alert read may be partial, later ones are missing. */
  truncated: boolean;
}

/** SNS's longest `Subject`, characters; Alertmanager cuts a longer one (and may end it with "…"). */
export const SNS_SUBJECT_MAX_CHARS = 100;
/** Characters compared when matching the subject to the common labels: bounds the work on repeated values. */
const SUBJECT_MATCH_BUDGET = 1_000_000;
/**
 * Most common label values matched against a subject: far above any real rule's labels (tens), and a bound on
 * the search's depth (one call per value) and on the copies it makes, which the character budget does not count.
 */
export const MAX_SUBJECT_VALUES = 256;

/**
 * Why the alerts read cannot be the ones the message was rendered from, or `undefined` when nothing
 * contradicts them.
 * @param alerts every alert read, in order (with a cut message, the last may be partial)
 */
export function contradiction(alerts: ReadAlert[], evidence: Evidence): string | undefined {
  const whole = evidence.truncated ? alerts.slice(0, -1) : alerts;
  return (
    twice(whole) ?? countProblem(alerts, evidence) ?? openingProblem(whole, evidence) ?? subjectProblem(whole, evidence)
  );
}

/** Firing alerts the default subject (`[FIRING:3] …`, Alertmanager's `__subject`) counts; `undefined` when it has no count. */
export function firingCount(subject: string | undefined): number | undefined {
  const m = /^\[FIRING:(\d{1,9})\] /.exec(subject ?? '');
  return m ? Number(m[1]) : undefined;
}

/** The pairs every set has with the same value (Alertmanager's `commonLabels`, `commonAnnotations`). */
export function common(sets: Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = sets;
  return Object.fromEntries(
    Object.entries(first ?? {}).filter(([k, v]) => rest.every((s) => Object.hasOwn(s, k) && s[k] === v)),
  );
}

function twice(alerts: ReadAlert[]): string | undefined {
  const seen = new Set<string>();
  for (const a of alerts) {
    const fingerprint = labelSetFingerprint(a.labels);
    if (seen.has(fingerprint)) return `alert ${fingerprint} written twice: a value's text wrote an alert`;
    seen.add(fingerprint);
  }
  return undefined;
}

/**
 * The firing section comes first and is whole unless AMP cut the message, so the firing alerts read
 * are exactly the count, or (cut) at most the count.
 */
function countProblem(alerts: ReadAlert[], evidence: Evidence): string | undefined {
  const counted = firingCount(evidence.subject);
  if (counted === undefined) return undefined;
  const firing = alerts.filter((a) => a.status === 'firing').length;
  if (firing === counted || (evidence.truncated && firing < counted)) return undefined;
  return `${firing} firing alerts read, the subject counts ${counted}: a value's text changed the structure`;
}

/** Values sorted by name, as Go's `SortedPairs` gives them (names compared byte-wise). */
const sortedValues = (pairs: Record<string, string>) =>
  Object.keys(pairs)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((k) => pairs[k]!);

function openingProblem(alerts: ReadAlert[], evidence: Evidence): string | undefined {
  // A cut message lost alerts that may share fewer annotations than the ones read.
  if (evidence.truncated) return undefined;
  const expected = sortedValues(common(alerts.map((a) => a.annotations))).join(' ');
  if (evidence.opening.trim() === expected.trim()) return undefined;
  return "the opening line is not the alerts' common annotations: a value's text changed the structure";
}

/**
 * The default subject's text after the status must be the values of the alerts' common labels: some
 * of them (the group labels), a space, then the others in parentheses. Subjects of one's own are not
 * read; a subject of {@link SNS_SUBJECT_MAX_CHARS} or more may have been cut and is read as a prefix.
 */
function subjectProblem(alerts: ReadAlert[], evidence: Evidence): string | undefined {
  if (evidence.truncated || alerts.length === 0) return undefined;
  const m = /^\[(?:FIRING:\d{1,9}|RESOLVED)\] /.exec(evidence.subject ?? '');
  if (!m) return undefined;
  // Trailing white space (the template's space after the group values) is not relied on.
  let rest = evidence.subject!.slice(m[0].length).trimEnd();
  const cut = [...evidence.subject!].length >= SNS_SUBJECT_MAX_CHARS;
  if (cut) rest = rest.replace(/(?:…|\.\.\.)$/, '');
  const values = sortedValues(common(alerts.map((a) => a.labels)));
  const found = matchesSubject(values, rest.trimEnd(), cut);
  if (found === true) return undefined;
  return found === false
    ? "the subject's label values are not the alerts' common labels: a value's text changed the structure"
    : "the subject's label values could not be matched within bounds (too many repeated values)";
}

/**
 * Whether some split of `values` (in order) into group labels G and the rest R renders as
 * `join(G) + " " + (R.length ? "(" + join(R) + ")" : "")`, trailing white space left out — equal to
 * `subject` (given without trailing white space), or, when `prefix`, starting with it. Work is bounded by
 * {@link SUBJECT_MATCH_BUDGET} characters compared; `undefined` when the search ran out of it (repeated values
 * can make many splits read alike), or for more than {@link MAX_SUBJECT_VALUES} values.
 */
export function matchesSubject(values: string[], subject: string, prefix: boolean): boolean | undefined {
  if (values.length > MAX_SUBJECT_VALUES) return undefined;
  let budget = SUBJECT_MATCH_BUDGET;
  /** Whether `text` stands at `at` (with `prefix`, a subject ending inside it also counts). */
  const reads = (text: string, at: number) => {
    budget -= text.length + 1;
    if (prefix && subject.length - at < text.length) return text.startsWith(subject.slice(at));
    return subject.startsWith(text, at);
  };
  const rest = (others: string[], at: number) => {
    const tail = others.length ? ` (${others.join(' ')})` : '';
    return reads(tail, at) && (prefix || at + tail.length === subject.length);
  };
  const search = (i: number, at: number, others: string[]): boolean | undefined => {
    if (budget < 0) return undefined;
    if (prefix && at >= subject.length) return true;
    if (i === values.length) return rest(others, at);
    const word = at === 0 ? values[i]! : ` ${values[i]!}`;
    const asGroup = reads(word, at) ? search(i + 1, at + word.length, others) : false;
    if (asGroup !== false) return asGroup;
    return search(i + 1, at, [...others, values[i]!]);
  };
  const found = search(0, 0, []);
  return found === true || budget >= 0 ? found : undefined;
}

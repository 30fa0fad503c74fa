/**
 * The group identity of an AMP message in the default text body, which carries no group key and no
 * group labels. Every group would otherwise be `amp/<receiver>:{}`, and unrelated alerts (a KV-cache
 * alert of one model, a memory leak on another node) would share one Slack thread or Feishu card.
 *
 * 1. The group labels, read from the default subject (`sns.default.subject`, Alertmanager's `__subject`):
 *    `[FIRING:<n>] <group label values> (<other common label values>)`, each part's values sorted by label
 *    name. The common labels are known (`default-text-evidence.ts`), so the group labels are the split of
 *    them, in name order, that renders as the subject. Used when exactly one split does: the group key is
 *    then the one the JSON body gives (`amp/<receiver>:{<group labels>}`), stable while the group's alerts
 *    come and go.
 * 2. Otherwise (no subject, a subject of one's own, one AMP cut at 100 characters, or values that split
 *    two ways), the alerts' common labels. A group's common labels include its group labels, so two
 *    groups never share them; the limit: one group whose alerts change may get another identity (a new
 *    thread for the alerts that joined; follow-ups of the alerts already announced still go to theirs).
 * @see https://github.com/prometheus/alertmanager/blob/v0.25.0/template/default.tmpl (`__subject`)
 */
import { MAX_SUBJECT_VALUES, SNS_SUBJECT_MAX_CHARS } from './default-text-evidence.js';

/** Characters compared while splitting the subject: bounds the work on repeated values. */
const SPLIT_BUDGET = 1_000_000;

/** A message's group identity: the labels its synthetic group key is made of, and its `groupLabels`. */
export interface DefaultTextGroup {
  identity: Record<string, string>;
  /** The group labels when the subject named them; `{}` otherwise. */
  groupLabels: Record<string, string>;
}

/**
 * @param commonLabels the labels every alert of the message shares
 * @param subject the SNS `Subject`, when there is one
 */
export function defaultTextGroup(commonLabels: Record<string, string>, subject: string | undefined): DefaultTextGroup {
  const groupLabels = subjectGroupLabels(commonLabels, subject);
  return groupLabels ? { identity: groupLabels, groupLabels } : { identity: commonLabels, groupLabels: {} };
}

/** The group labels the default subject names, when exactly one split of the common labels renders as it. */
function subjectGroupLabels(
  commonLabels: Record<string, string>,
  subject: string | undefined,
): Record<string, string> | undefined {
  const m = /^\[(?:FIRING:\d{1,9}|RESOLVED)\] /.exec(subject ?? '');
  if (!m || [...subject!].length >= SNS_SUBJECT_MAX_CHARS) return undefined;
  const names = Object.keys(commonLabels).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const splits = groupSplits(
    names.map((n) => commonLabels[n]!),
    subject!.slice(m[0].length).trimEnd(),
  );
  if (splits?.length !== 1) return undefined;
  return Object.fromEntries(splits[0]!.map((i) => [names[i]!, commonLabels[names[i]!]!]));
}

/**
 * The splits of `values` (in order) into group values G and the rest R that render as
 * `join(G, " ") + " " + (R.length ? "(" + join(R, " ") + ")" : "")`, trailing white space left out, equal
 * to `text`: each as the indexes of G; at most two (two mean ambiguous); `undefined` when the work ran out
 * (or for more than {@link MAX_SUBJECT_VALUES} values).
 */
function groupSplits(values: string[], text: string): number[][] | undefined {
  if (values.length > MAX_SUBJECT_VALUES) return undefined;
  let budget = SPLIT_BUDGET;
  const found: number[][] = [];
  const reads = (part: string, at: number) => {
    budget -= part.length + 1;
    return text.startsWith(part, at);
  };
  const search = (i: number, at: number, group: number[], others: string[]): void => {
    if (budget < 0 || found.length > 1) return;
    if (i === values.length) {
      const tail = others.length ? ` (${others.join(' ')})` : '';
      if (reads(tail, at) && at + tail.length === text.length) found.push(group);
      return;
    }
    const word = group.length === 0 ? values[i]! : ` ${values[i]!}`;
    if (reads(word, at)) search(i + 1, at + word.length, [...group, i], others);
    search(i + 1, at, group, [...others, values[i]!]);
  };
  search(0, 0, [], []);
  return budget < 0 ? undefined : found;
}

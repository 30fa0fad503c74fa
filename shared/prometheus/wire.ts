/**
 * The Prometheus HTTP API's JSON envelope and result formats, as zod schemas.
 *
 * Sample values arrive as strings formatted by Go's `strconv.FormatFloat(v, 'f', -1, 64)`, so the
 * special values are `"NaN"`, `"+Inf"` and `"-Inf"`. They are parsed by hand because
 * `Number("+Inf")` is `NaN` in JavaScript.
 *
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#expression-query-result-formats
 */
import * as z from '../core/zod.js';

const SPECIAL_VALUES: ReadonlyMap<string, number> = new Map([
  ['NaN', Number.NaN],
  ['+Inf', Number.POSITIVE_INFINITY],
  ['Inf', Number.POSITIVE_INFINITY],
  ['-Inf', Number.NEGATIVE_INFINITY],
]);

const DECIMAL = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

/**
 * Parses one sample value as the Prometheus API writes it.
 * @param text e.g. `"0.25"`, `"1e-05"`, `"NaN"`, `"+Inf"`, `"-Inf"`
 * @returns the number, with `NaN` and ±`Infinity` for the special values
 * @throws RangeError when `text` is not a Prometheus float
 * @example parseSampleValue('+Inf') // Infinity
 */
export function parseSampleValue(text: string): number {
  const special = SPECIAL_VALUES.get(text);
  if (special !== undefined) return special;
  if (!DECIMAL.test(text)) throw new RangeError(`not a Prometheus sample value: ${JSON.stringify(text)}`);
  return Number(text);
}

function isSampleValue(text: string): boolean {
  return SPECIAL_VALUES.has(text) || DECIMAL.test(text);
}

/** One point: `time` in Unix seconds (fractional), `value` parsed (may be NaN or ±Infinity). */
export interface Point {
  time: number;
  value: number;
}

/** One series of an instant vector (or a scalar, with no labels). */
export interface Sample extends Point {
  metric: Record<string, string>;
}

/** One series of a range query (a matrix). Points are in time order, as Prometheus sends them. */
export interface Series {
  metric: Record<string, string>;
  points: Point[];
}

const labels = z.record(z.string(), z.string());

const point = z.pipe(
  z.tuple([z.number(), z.string().check(z.refine(isSampleValue, { message: 'not a Prometheus sample value' }))]),
  z.transform(([time, value]): Point => ({ time, value: parseSampleValue(value) })),
);

/**
 * `data` of a successful query. Native-histogram samples (`histogram` instead of `value`) are not
 * supported: a vector holding one fails validation.
 */
export const queryDataSchema = z.discriminatedUnion('resultType', [
  z.object({ resultType: z.literal('vector'), result: z.array(z.object({ metric: labels, value: point })) }),
  z.object({
    resultType: z.literal('matrix'),
    result: z.array(z.object({ metric: labels, values: z._default(z.array(point), []) })),
  }),
  z.object({ resultType: z.literal('scalar'), result: point }),
  z.object({ resultType: z.literal('string'), result: z.tuple([z.number(), z.string()]) }),
]);

export type QueryData = z.infer<typeof queryDataSchema>;

/** The envelope every API response carries, success or error. */
export const envelopeSchema = z.object({
  status: z.enum(['success', 'error']),
  data: z.optional(z.unknown()),
  errorType: z.optional(z.string()),
  error: z.optional(z.string()),
  warnings: z.optional(z.array(z.string())),
});

/**
 * Chart link tokens: which chart a URL shows ({@link ChartSpec}), signed with the acknowledgement
 * keys (`ACK_SECRET`, and `ACK_PREVIOUS_SECRET` during a rotation) so nobody can make this service
 * run a query of their choosing, alter the alert it charts, or stretch the link's life.
 *
 * Wire form: a signed token of `shared/core/signed-token.ts` (`<payload>.<signature>`, HMAC-SHA256 over
 * `chart.v1.` + `payload`), where `payload` is the UTF-8 JSON `{"v":1,"spec":{…},"exp":s}`, with `"lang":"zh-CN"`
 * when the chart's own words are Chinese (the link was made for a zh-CN channel or page). The domain
 * prefix differs from the acknowledgement tokens' (`ack.v1.`), so a chart token is never a valid
 * acknowledgement token, nor the reverse.
 */
import * as z from '../core/zod.js';
import { LOCALES, type Locale } from '../core/locale.js';
import { PipelineError } from '../core/errors.js';
import { openToken, signToken, type SigningKeys, type TokenDomain, type TokenProblem } from '../core/signed-token.js';
import type { ChartSpec } from './spec.js';

const DOMAIN: TokenDomain = 'chart.v1.';

/** Thrown by {@link verifyChartToken}; `message` is safe to show (it never echoes the token). */
export class ChartTokenError extends PipelineError<TokenProblem> {
  constructor(
    readonly problem: TokenProblem,
    message: string,
  ) {
    super(message, problem);
    this.name = 'ChartTokenError';
  }
}

const specSchema = z.object({
  query: z.string().check(z.minLength(1)),
  labels: z.record(z.string(), z.string()),
  title: z.string(),
  unit: z.enum(['seconds', 'ratio', 'count', 'per_second', 'mebibytes', 'none']),
  firedAt: z.number(),
  threshold: z.optional(z.object({ op: z.enum(['>', '>=', '<', '<=', '==', '!=']), value: z.number() })),
  memory: z.optional(
    z.object({ windowSeconds: z.number().check(z.nonnegative()), capacityMiB: z.nullable(z.number()) }),
  ),
});
const bodySchema = z.object({ v: z.literal(1), spec: specSchema, exp: z.number(), lang: z.optional(z.enum(LOCALES)) });

/** What the chart route says of a token refused before its body is read. */
const REFUSED: Record<Exclude<TokenProblem, 'expired'>, string> = {
  malformed: 'This is not a chart link.',
  forged: 'This chart link is not valid: its signature does not match.',
  retired: 'This chart link was signed with a key that has since been retired.',
};

/**
 * Signs a chart token with the current key.
 * @param expiresAt epoch seconds
 * @param locale the language of the chart's own words; `en` (the default) is not written, so an English
 *   link is the same as before languages existed
 * @returns the URL-safe token (no characters that need escaping in a path segment)
 */
export function signChartToken(
  spec: ChartSpec,
  expiresAt: number,
  keys: Pick<SigningKeys, 'current'>,
  locale: Locale = 'en',
): string {
  return signToken(DOMAIN, { v: 1, spec, exp: Math.floor(expiresAt), ...(locale !== 'en' && { lang: locale }) }, keys);
}

/**
 * Verifies a token: shape, signature (current key, then the previous one within its grace period,
 * compared in constant time), then expiry.
 * @param nowMs current time, epoch milliseconds
 * @returns the chart it names, its expiry (epoch seconds) and the language of its words (`en` when the token has none)
 * @throws ChartTokenError naming the problem
 */
export function verifyChartToken(
  token: string,
  keys: SigningKeys,
  nowMs: number,
): { spec: ChartSpec; expiresAt: number; locale: Locale } {
  const opened = openToken(DOMAIN, token, keys, nowMs);
  if ('problem' in opened) throw new ChartTokenError(opened.problem, REFUSED[opened.problem]);
  const body = bodySchema.safeParse(opened.body);
  if (!body.success) throw new ChartTokenError('malformed', 'This chart link has an unknown format.');
  if (body.data.exp * 1000 <= nowMs)
    throw new ChartTokenError('expired', `This chart link expired at ${new Date(body.data.exp * 1000).toISOString()}.`);
  const { threshold, memory, ...rest } = body.data.spec;
  return {
    spec: { ...rest, ...(threshold && { threshold }), ...(memory && { memory }) },
    expiresAt: body.data.exp,
    locale: body.data.lang ?? 'en',
  };
}

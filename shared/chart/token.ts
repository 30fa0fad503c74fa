/**
 * Chart link tokens: which chart a URL shows ({@link ChartSpec}), signed with the acknowledgement
 * keys (`ACK_SECRET`, and `ACK_PREVIOUS_SECRET` during a rotation) so nobody can make this service
 * run a query of their choosing, alter the alert it charts, or stretch the link's life.
 *
 * Wire form, as acknowledgement tokens (`shared/ack/token.ts`): `<payload>.<signature>`, both base64url
 * without padding (RFC 4648 §5); `payload` is the UTF-8 JSON `{"v":1,"spec":{…},"exp":s}` and
 * `signature` is HMAC-SHA256 (RFC 2104) over `chart.v1.` + `payload`. The different domain prefix
 * means a chart token is never a valid acknowledgement token, nor the reverse.
 *
 * @see https://www.rfc-editor.org/rfc/rfc2104
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-5
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import * as z from 'zod';
import { PipelineError } from '../core/errors.js';
import type { Secret } from '../core/secret.js';
import type { ChartSpec } from './spec.js';

const DOMAIN = 'chart.v1.';
/** Longest token accepted before any parsing, characters. */
export const MAX_CHART_TOKEN_CHARS = 4096;

/** The signing keys: the acknowledgement keys (structurally `AckKeys` of `shared/ack/token.ts`). */
export interface ChartKeys {
  current: Secret;
  /** Accepted for verification only, while `nowMs < untilMs` (epoch milliseconds). */
  previous?: { secret: Secret; untilMs: number };
}

/**
 * Why a chart token was refused, and the HTTP status answered: `malformed` 400, `forged` 403
 * (signature does not match), `expired` 410, `retired` 410 (the previous key's grace period ended).
 */
export type ChartTokenProblem = 'malformed' | 'forged' | 'expired' | 'retired';

export const CHART_TOKEN_STATUS: Record<ChartTokenProblem, 400 | 403 | 410> = { malformed: 400, forged: 403, expired: 410, retired: 410 };

/** Thrown by {@link verifyChartToken}; `message` is safe to show (it never echoes the token). */
export class ChartTokenError extends PipelineError<ChartTokenProblem> {
  constructor(
    readonly problem: ChartTokenProblem,
    message: string,
  ) {
    super(message, problem);
    this.name = 'ChartTokenError';
  }
}

const specSchema = z.object({
  query: z.string().min(1),
  labels: z.record(z.string(), z.string()),
  title: z.string(),
  unit: z.enum(['seconds', 'ratio', 'count', 'per_second', 'mebibytes', 'none']),
  firedAt: z.number(),
  threshold: z.object({ op: z.enum(['>', '>=', '<', '<=', '==', '!=']), value: z.number() }).optional(),
  memory: z.object({ windowSeconds: z.number().nonnegative(), capacityMiB: z.number().nullable() }).optional(),
});
const bodySchema = z.object({ v: z.literal(1), spec: specSchema, exp: z.number() });

const mac = (key: Secret, payload: string) =>
  createHmac('sha256', key.reveal())
    .update(DOMAIN + payload)
    .digest();

/**
 * Signs a chart token with the current key.
 * @param expiresAt epoch seconds
 * @returns the URL-safe token (no characters that need escaping in a path segment)
 */
export function signChartToken(spec: ChartSpec, expiresAt: number, keys: Pick<ChartKeys, 'current'>): string {
  const payload = Buffer.from(JSON.stringify({ v: 1, spec, exp: Math.floor(expiresAt) }), 'utf8').toString('base64url');
  return `${payload}.${mac(keys.current, payload).toString('base64url')}`;
}

/**
 * Verifies a token: shape, signature (current key, then the previous one within its grace period,
 * compared in constant time), then expiry.
 * @param nowMs current time, epoch milliseconds
 * @returns the chart it names and its expiry (epoch seconds)
 * @throws ChartTokenError naming the problem
 */
export function verifyChartToken(token: string, keys: ChartKeys, nowMs: number): { spec: ChartSpec; expiresAt: number } {
  const [payload, signature, extra] = token.length <= MAX_CHART_TOKEN_CHARS ? token.split('.') : [];
  if (!payload || !signature || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(payload + signature)) {
    throw new ChartTokenError('malformed', 'This is not a chart link.');
  }
  const given = Buffer.from(signature, 'base64url');
  // Only the canonical spelling counts (the decoder ignores a last character's unused bits).
  const canonical = given.toString('base64url') === signature;
  const matches = (key: Secret) => {
    const expected = mac(key, payload);
    return canonical && given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!matches(keys.current)) {
    if (!keys.previous || !matches(keys.previous.secret)) throw new ChartTokenError('forged', 'This chart link is not valid: its signature does not match.');
    if (nowMs >= keys.previous.untilMs) throw new ChartTokenError('retired', 'This chart link was signed with a key that has since been retired.');
  }
  const body = bodySchema.safeParse(parseJson(payload));
  if (!body.success) throw new ChartTokenError('malformed', 'This chart link has an unknown format.');
  if (body.data.exp * 1000 <= nowMs) throw new ChartTokenError('expired', `This chart link expired at ${new Date(body.data.exp * 1000).toISOString()}.`);
  const { threshold, memory, ...rest } = body.data.spec;
  return { spec: { ...rest, ...(threshold && { threshold }), ...(memory && { memory }) }, expiresAt: body.data.exp };
}

function parseJson(payload: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * The languages messages, pages and charts are written in. Every layer may need to know one (a
 * likely-cause rule carries its zh-CN text beside its English; the renderers pick), so the type
 * lives here; the words themselves live with what they describe (`shared/render/locale.ts`,
 * `shared/enrich/causes/rules.ts`, `shared/enrich/signals/labels.ts`).
 */

/** A language: `en` (Slack, SNS, PagerDuty, console default) or `zh-CN` (Feishu, DingTalk, WeCom default). */
export type Locale = 'en' | 'zh-CN';
export const LOCALES = ['en', 'zh-CN'] as const satisfies readonly Locale[];

/**
 * The locale a browser prefers among ours, from its `Accept-Language` header (RFC 9110 §12.5.4): the
 * highest-weighted range that is `zh` or `zh-*` (any Chinese; our Chinese is simplified) or `en`/`en-*`;
 * `undefined` when it names neither (or the header is absent), so the caller's default stands.
 * @example preferredLocale('zh-CN,zh;q=0.9,en;q=0.8') // 'zh-CN'
 * @example preferredLocale('en-US,en;q=0.9,zh;q=0.5') // 'en'
 */
export function preferredLocale(header: string | undefined): Locale | undefined {
  if (!header) return undefined;
  let best: { locale: Locale; q: number } | undefined;
  // A header of a few ranges; anything longer is cut, it is only a preference.
  for (const part of header.slice(0, 512).split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!(q > 0)) continue;
    const locale =
      range === 'zh' || range.startsWith('zh-')
        ? 'zh-CN'
        : range === 'en' || range.startsWith('en-')
          ? 'en'
          : undefined;
    if (locale && (!best || q > best.q)) best = { locale, q };
  }
  return best?.locale;
}

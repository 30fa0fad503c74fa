/**
 * A custom bot's keyword security ("自定义关键词"): Feishu refuses (code 19024) every message whose text
 * holds none of the bot's keywords. Our cards' headers say 告警 when firing, but an acknowledgement or a
 * resolve says 已认领 or 已恢复, and an English card says neither; so a configured keyword is put in every
 * card's title that lacks it (before the title is cut to its limit, so the cut cannot drop it).
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot (安全设置: 自定义关键词)
 */
import type { Locale } from '../../core/locale.js';

/** Longest keyword, characters: Feishu's own limit for one keyword. */
export const MAX_KEYWORD_CHARS = 20;

/**
 * The title carrying `keyword`: unchanged when it already holds it, else the keyword first
 * (`【告警】👀 已认领 · …`, `[alert] 👀 ACKNOWLEDGED · …`).
 */
export function withKeyword(title: string, keyword: string | undefined, locale: Locale): string {
  if (!keyword || title.includes(keyword)) return title;
  return locale === 'zh-CN' ? `【${keyword}】${title}` : `[${keyword}] ${title}`;
}

/** Human durations for acknowledgement lines and pages. */
import type { Locale } from '../core/locale.js';

const UNITS: Readonly<Record<Locale, { s: string; min: string; h: string; d: string }>> = {
  en: { s: 's', min: 'min', h: 'h', d: 'd' },
  'zh-CN': { s: '秒', min: '分钟', h: '小时', d: '天' },
};

/**
 * A duration between two instants, rounded down to its largest units: `45 s`, `12 min`,
 * `3 h 5 min`, `2 d 4 h` (zh-CN: `45 秒`, `12 分钟`, `3 小时 5 分钟`, `2 天 4 小时`). Negative spans (clock
 * skew) read `0 s`.
 * @param fromMs epoch milliseconds
 * @param toMs epoch milliseconds
 */
export function elapsed(fromMs: number, toMs: number, locale: Locale = 'en'): string {
  const u = UNITS[locale];
  const s = Math.max(0, Math.floor((toMs - fromMs) / 1000));
  if (Number.isNaN(s)) return '?';
  if (s < 60) return `${s} ${u.s}`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} ${u.min}`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} ${u.h} ${min % 60} ${u.min}` : `${h} ${u.h}`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} ${u.d} ${h % 24} ${u.h}` : `${d} ${u.d}`;
}

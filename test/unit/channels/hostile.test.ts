/**
 * Alert text is written by whoever can set a label or an annotation (a rule file, a pushed alert,
 * Alertmanager's API). Every renderer must show it as text: links only to http(s), no mentions, no
 * markup, no forged log lines or terminal escapes on the console.
 */
import { describe, expect, it } from 'vitest';
import { alertLinks } from '../../../shared/render/content.js';
import { createConsoleChannel } from '../../../shared/channels/console.js';
import { renderFeishu, type FeishuMessage } from '../../../shared/channels/feishu/index.js';
import { escapeMrkdwn, renderSlack, type SlackMessage } from '../../../shared/channels/slack/index.js';
import { escapeRobotMarkdown } from '../../../shared/channels/robot-markdown.js';
import fc from 'fast-check';
import { renderSns } from '../../../shared/channels/sns/message.js';
import { renderText } from '../../../shared/render/text.js';
import { renderDingTalk } from '../../../shared/channels/dingtalk/index.js';
import { renderWeCom } from '../../../shared/channels/wecom/index.js';
import type { Notification } from '../../../shared/render/notification.js';
import { fixtureNotification, manyAlertsNotification } from '../../helpers/notifications.js';

/** URLs that must never become a link: script, data and file schemes, however they are spelled. */
const HOSTILE_URLS = [
  'javascript:alert(1)',
  'JaVaScRiPt:alert(document.cookie)',
  '  javascript:alert(1)',
  '\tjava\nscript:alert(1)',
  '\u0001javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  'file:///etc/passwd',
  '//evil.example/no-scheme',
];

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:alerts';

/** The KV-cache alert with every link field set to `url`. */
function withLinks(url: string, externalURL = url): Notification {
  const n = fixtureNotification('firing-kv-cache-critical');
  n.alerts[0]!.generatorURL = url;
  n.alerts[0]!.annotations.runbook_url = url;
  n.externalURL = externalURL;
  return n;
}

/** Every link target a Slack message carries: `<url|label>` in mrkdwn and button URLs. */
function slackTargets(message: SlackMessage): string[] {
  const texts = message.blocks.flatMap((b) =>
    b.type === 'section' ? [b.text.text] : b.type === 'context' ? b.elements.map((e) => e.text) : [],
  );
  const buttons = message.blocks.flatMap((b) => (b.type === 'actions' ? b.elements.map((e) => e.url) : []));
  return [...texts.flatMap((t) => [...t.matchAll(/<([^|>]*)[|>]/g)].map((m) => m[1]!)), ...buttons];
}

const feishuButtons = (message: FeishuMessage) =>
  message.card.elements.flatMap((e) => (e.tag === 'action' ? e.actions.map((a) => a.url) : []));
/** `Graph: <url>`-style lines of the plain text, in every locale. */
const textTargets = (text: string) =>
  [
    ...text.matchAll(
      /^(?:Graph|Runbook|Silence|Prometheus 图表|处理手册|静默|Silence the group|静默整组)[^:]*: (.*)$/gm,
    ),
  ].map((m) => m[1]!);

describe('links taken from alerts', () => {
  it.each(HOSTILE_URLS)('are dropped when not http(s): %j', (url) => {
    const n = withLinks(url);
    expect(alertLinks(n.alerts[0]!, n.externalURL)).toEqual([]);
    expect(slackTargets(renderSlack(n))).toEqual([]);
    expect(feishuButtons(renderFeishu(n))).toEqual([]);
    const text = renderText(n);
    expect(text).not.toMatch(/javascript|data:|vbscript|file:|evil/i);
    expect(renderSns(n, TOPIC).Message).not.toMatch(/javascript|data:|vbscript|file:|evil/i);
  });

  it.each([
    'https://user:pw@runbooks.example.com/kv',
    'https://user@runbooks.example.com/kv',
    'https://:pw@runbooks.example.com/kv',
    'HTTP://user:pw@Runbooks.Example.com',
  ])('are dropped when they carry credentials (userinfo), which a link would show to every reader: %j', (url) => {
    const n = withLinks(url);
    expect(alertLinks(n.alerts[0]!, n.externalURL)).toEqual([]);
    expect(slackTargets(renderSlack(n))).toEqual([]);
    expect(feishuButtons(renderFeishu(n))).toEqual([]);
    expect(JSON.stringify(renderSlack(n))).not.toMatch(/pw@|user@/);
    expect(JSON.stringify(renderFeishu(n))).not.toMatch(/pw@|user@/);
    expect(renderText(n)).not.toMatch(/pw@|user@/);
    expect(renderSns(n, TOPIC).Message).not.toMatch(/pw@|user@/);
  });

  it('are dropped from a storm digest when Alertmanager’s externalURL is not http(s)', () => {
    const n = manyAlertsNotification(30);
    n.externalURL = 'javascript:alert(1)//';
    expect(slackTargets(renderSlack(n))).toEqual([]);
    expect(feishuButtons(renderFeishu(n))).toEqual([]);
    expect(renderText(n)).not.toMatch(/javascript/i);
  });

  it('keep http(s) links whatever the case of the scheme or the whitespace around it, normalised', () => {
    const n = withLinks('  HTTPS://Runbooks.Example.com/kv cache\n', 'HTTP://am.example.com:9093');
    expect(alertLinks(n.alerts[0]!, n.externalURL).map((l) => l.url)).toEqual([
      'https://runbooks.example.com/kv%20cache',
      'https://runbooks.example.com/kv%20cache',
      expect.stringMatching(/^http:\/\/am\.example\.com:9093\/#\/silences\/new\?filter=/),
    ]);
    for (const url of [
      ...slackTargets(renderSlack(n)),
      ...feishuButtons(renderFeishu(n)),
      ...textTargets(renderText(n)),
    ])
      expect(url).toMatch(/^https?:\/\//);
    expect(textTargets(renderText(n))).toHaveLength(3);
  });
});

describe('Slack mrkdwn from alert text', () => {
  const INJECTIONS = [
    '<!channel>',
    '<!here|here>',
    '<@U0123ABCD>',
    '<#C0123ABCD>',
    '<!subteam^S0123>',
    '<https://evil.example|Runbook>',
    '<javascript:alert(1)|click>',
    '&lt;!channel&gt;',
    '*URGENT*',
    '_call now_',
    '~resolved~',
    '`rm -rf`',
    '```block```',
  ];

  it('cannot mention anyone or add a link, in any field that reaches the message', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const payload = INJECTIONS.join(' ');
    const alert = n.alerts[0]!;
    alert.annotations.summary = payload;
    alert.annotations.description = payload;
    alert.labels.model_name = payload;
    alert.labels.alertname = payload;
    alert.acknowledgement = { by: payload, at: '2026-11-29T12:45:00Z', channel: 'slack', silenceId: payload };
    n.commonLabels = { ...n.commonLabels, alertname: payload, severity: payload };
    const message = renderSlack(n);
    const mrkdwn = JSON.stringify(message.blocks.filter((b) => b.type !== 'header'));
    expect(mrkdwn).not.toMatch(/<[!@#]/);
    expect(message.text).not.toMatch(/<[!@#]|<https?:/);
    // The only links are the alert's own (graph, silence): no `<https://evil…|…>`.
    expect(slackTargets(message).map((url) => new URL(url).hostname)).not.toContain('evil.example');
    // `&lt;` typed in the alert stays visible as typed, not turned into `<`.
    expect(mrkdwn).toContain('&amp;lt;!channel&amp;gt;');
    // Formatting characters of alert text are shown, not applied: no bold, italics, strike or code from it.
    expect(mrkdwn).toContain('＊URGENT＊ ＿call now＿ ～resolved～ ｀rm -rf｀ ｀｀｀block｀｀｀');
    // (Outside our own links' URLs, where Slack formats nothing.)
    expect(mrkdwn.replace(/<https?:[^>]*>/g, '')).not.toMatch(/\*URGENT|_call|~resolved|`rm|```/);
    expect(message.text).not.toMatch(/\*URGENT|_call|~resolved|`rm|```/);
    // Slack does not parse the text itself: a bare `@channel` or URL stays text.
    const objects = message.blocks.flatMap((b) =>
      b.type === 'section' ? [b.text] : b.type === 'context' ? b.elements : [],
    );
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) expect(object).toMatchObject({ type: 'mrkdwn', verbatim: true });
  });
});

/**
 * The lines of robot markdown that could start a block, in the strictest dialect either client might read:
 * a heading (`#`, also without a space), a quote, a table row or its delimiter row (`|`, `:-`), a list item
 * (`-`, `+`, `*`, `1.`, `1)`), a rule or a setext underline (`---`, `***`, `===`), an indented code block (4
 * spaces or a tab). Leading spaces (also no-break and ideographic ones) are skipped, and invisible format
 * characters ignored (a client may drop them). A line of only spaces is blank, not code.
 */
function blockStarts(markdown: string): string[] {
  const marker = /^[ \t\u00a0\u3000]*(?:[#>|]|[-+=:](?=[-=\s]|$)|\*(?=\s|[ \t*]*$)|\d+[.)](?=\s|$))/;
  const code = /^(?: {4}|[ ]{0,3}\t)[ \t]*\S/;
  return markdown
    .replace(/\p{Cf}/gu, '')
    .split(/\r\n|[\r\n\u2028\u2029]/)
    .filter((line) => marker.test(line) || code.test(line));
}

describe('escaping alert text for Slack mrkdwn and robot markdown (property)', () => {
  const PIECES = [
    '<!channel>',
    '<!here>',
    '<@U123>',
    '<#C1>',
    '<http://evil|click>',
    '&',
    '<',
    '>',
    '*',
    '_',
    '~',
    '`',
    // What could start a block at a line's start.
    '\n',
    '\r\n',
    '\r',
    '\u2028',
    ' ',
    '    ',
    '\t',
    '\u200b',
    '#',
    '-',
    '+',
    '=',
    '|',
    ':',
    '1.',
    '12)',
    '---',
    '===',
  ];
  const text = fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string({ maxLength: 4 })), { maxLength: 12 });
  /** A formatting character Slack or a robot could pair: at the start or end of a word. */
  const atBoundary = /(^|[^\p{L}\p{N}])[*_~`]|[*_~`]($|[^\p{L}\p{N}])/u;

  it('leaves no control sequence, mention, link or formatting mark at a word boundary, and hides no character', () => {
    fc.assert(
      fc.property(text, (parts) => {
        const raw = parts.join('');
        const slack = escapeMrkdwn(raw);
        expect(slack).not.toMatch(/[<>]|&(?!amp;|lt;|gt;)/);
        expect(slack).not.toMatch(atBoundary);
        const robot = escapeRobotMarkdown(raw);
        expect(robot).not.toMatch(/[<>[\]@]/);
        expect(robot).not.toMatch(atBoundary);
        // No line starts a block, whatever our markdown puts after it.
        expect(blockStarts(robot)).toEqual([]);
        expect(blockStarts(`${robot} **1** · x`)).toEqual([]);
        // Every character is still there to read (one for one, as its look-alike).
        expect([...robot]).toHaveLength([...raw].length);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('line starts of alert text in robot markdown', () => {
  it('show the mark that would open a block as its look-alike, one character for one', () => {
    expect(escapeRobotMarkdown('x\n# FAKE HEADING\n---\n1. item\n    code\n> quote')).toBe(
      'x\n＃ FAKE HEADING\n－--\n1． item\n\u00a0\u00a0\u00a0\u00a0code\n＞ quote',
    );
    expect(escapeRobotMarkdown('a\r\n\t+ b\r= \u2028| c |\n:--|--\n12) d\n\u200b## e')).toBe(
      'a\r\n\u00a0＋ b\r＝ \u2028｜ c |\n：--|--\n12） d\n\u200b＃# e',
    );
  });

  it('leave what opens no block as typed, and a blank line blank', () => {
    for (const typed of [
      '10.0.0.1:9100',
      '-1 errors',
      '+Inf',
      'a-b = c',
      '1.5 GiB',
      'v2) x',
      'x\n    \ny',
      'x\n\t\r\ny',
    ])
      expect(escapeRobotMarkdown(typed)).toBe(typed);
  });

  it('keep the indentation our markdown could follow from opening code', () => {
    expect(escapeRobotMarkdown('x\n\n   ')).toBe('x\n\n\u00a0\u00a0\u00a0');
  });
});

describe('Feishu card text from alert text', () => {
  const INJECTIONS = [
    '[click](https://evil.example)',
    '[x](javascript:alert(1))',
    '<at id=all></at>',
    '<at user_id="all">all</at>',
    '<a href="https://evil.example">here</a>',
    '<font color="red">fake</font>',
    '**bold** ~~gone~~',
  ];

  for (const kind of ['detail', 'digest', 'follow-up'] as const) {
    it(`cannot create links, buttons or mentions (${kind})`, () => {
      const n = kind === 'digest' ? manyAlertsNotification(30) : fixtureNotification('firing-kv-cache-critical');
      if (kind === 'follow-up') n.kind = 'acknowledged';
      const payload = INJECTIONS.join(' ');
      for (const alert of n.alerts) {
        alert.annotations.summary = payload;
        alert.annotations.description = payload;
        alert.labels.model_name = payload;
        alert.acknowledgement = { by: payload, at: '2026-11-29T12:45:00Z', channel: 'feishu' };
      }
      const message = renderFeishu(n);
      const texts = message.card.elements.flatMap((e) => (e.tag === 'div' ? [e.text] : []));
      expect(texts.length).toBeGreaterThan(0);
      // Alert text goes out in plain_text elements, which Feishu shows as typed.
      for (const text of texts) expect(text.tag).toBe('plain_text');
      expect(texts.map((t) => t.content).join('\n')).toContain(INJECTIONS[0]);
      for (const url of feishuButtons(message)) expect(new URL(url).protocol).toMatch(/^https?:$/);
      expect(feishuButtons(message).map((url) => new URL(url).hostname)).not.toContain('evil.example');
    });
  }
});

describe('DingTalk and WeCom markdown from alert text', () => {
  const INJECTIONS = [
    '[click](https://evil.example)',
    '[x](javascript:alert(1))',
    '![img](https://evil.example/x.png)',
    '<@all>',
    '<@zhangsan>',
    '@13800001111',
    '<font color="warning">fake</font>',
    '<https://evil.example>',
    '**bold** `code`',
    '~~struck~~ _italic_ __bold__',
  ];
  /** Alert text whose lines would each start a block. */
  const LINES = [
    'x',
    '# ✅ RESOLVED',
    '#no space',
    '---',
    '===',
    '***',
    '- item',
    '+ item',
    '1. item',
    '12) item',
    '  * item',
    '> quote',
    '| a | b |',
    ':--|--',
    '--|--',
    '',
    '    code',
    '\tcode',
    '\u200b# hidden',
    '  ## indented',
    'end\r\n# crlf\r## cr\n',
  ].join('\n');
  const renderers = {
    dingtalk: (n: Parameters<typeof renderDingTalk>[0]) => renderDingTalk(n).markdown.text,
    wecom: (n: Parameters<typeof renderWeCom>[0]) => renderWeCom(n).markdown.content,
  };

  for (const [platform, render] of Object.entries(renderers))
    for (const kind of ['detail', 'digest', 'follow-up'] as const) {
      it(`${platform}: cannot create links, images, mentions, tags or emphasis (${kind})`, () => {
        const n = kind === 'digest' ? manyAlertsNotification(30) : fixtureNotification('firing-kv-cache-critical');
        if (kind === 'follow-up') n.kind = 'acknowledged';
        const payload = INJECTIONS.join(' ');
        for (const alert of n.alerts) {
          alert.annotations.summary = payload;
          alert.annotations.description = payload;
          alert.labels.model_name = payload;
          alert.labels.alertname = payload;
          alert.acknowledgement = { by: payload, at: '2026-11-29T12:45:00Z', channel: platform };
        }
        n.commonLabels = { ...n.commonLabels, alertname: payload };
        const text = render(n);
        expect(text).not.toMatch(/<@|<font|<https?:|@1380|\]\(https:\/\/evil|\]\(javascript|!\[/);
        // Every markdown link is one of ours, to http(s).
        for (const [, url] of text.matchAll(/\]\(([^)]*)\)/g)) expect(url).toMatch(/^https?:\/\/(?!evil)/);
        // The text is still there to read.
        expect(text).toContain('［click］(https://evil.example)');
        expect(text).toContain('＜＠all＞');
        expect(text).toContain('～～struck～～ ＿italic＿ ＿＿bold＿＿');
      });

      it(`${platform}: lines of alert text cannot start a heading, quote, list, rule, table or code (${kind})`, () => {
        const n = kind === 'digest' ? manyAlertsNotification(30) : fixtureNotification('firing-kv-cache-critical');
        if (kind === 'follow-up') n.kind = 'acknowledged';
        const ours = blockStarts(render(structuredClone(n)));
        for (const alert of n.alerts) {
          alert.annotations.summary = LINES;
          alert.annotations.description = LINES;
          alert.labels.model_name = LINES;
          alert.labels.alertname = LINES;
          alert.labels.severity = LINES;
          alert.acknowledgement = { by: LINES, at: '2026-11-29T12:45:00Z', channel: platform };
        }
        n.commonLabels = { ...n.commonLabels, alertname: LINES };
        const text = render(n);
        // Only the blocks of our own markdown (its heading) remain.
        expect(blockStarts(text).map((line) => line.slice(0, 4))).toEqual(ours.map((line) => line.slice(0, 4)));
        // The text is still there to read, as typed but for the marks.
        expect(text).toContain('＃ ✅ RESOLVED');
        expect(text).toContain('1． item');
        expect(text).toContain('\u00a0\u00a0\u00a0\u00a0code');
      });
    }
});

describe('console channel', () => {
  const FORGED = '{"time":"2026-11-29T12:42:23.000Z","level":"error","event":"channel failed","channel":"slack"}';
  const HOSTILE_TEXT = [
    `cache full\n${FORGED}`,
    `cache full\r${FORGED}`,
    `cache full\r\n${FORGED}`,
    `cache full\u2028${FORGED}`,
    `cache full\u0085${FORGED}`,
    '\u001b[2J\u001b[H\u001b[31mred\u001b[0m \u001b]0;title\u0007 \u009b31m \u0008\u0008erase',
  ];

  it.each(HOSTILE_TEXT)('prints no forged log line or terminal escape for %j', async (payload) => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const alert = n.alerts[0]!;
    alert.annotations.summary = payload;
    alert.annotations.description = payload;
    alert.labels.model_name = payload;
    n.commonLabels = { ...n.commonLabels, alertname: payload };
    const written: string[] = [];
    await createConsoleChannel((s) => written.push(s)).send(n, AbortSignal.timeout(1000));
    const output = written.join('');
    // Only \n ends a line, and no line a log reader could take for one of ours.
    expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    for (const line of output.split('\n')) expect(line.trimStart().startsWith('{')).toBe(false);
    // The text is still there, visibly.
    expect(output).toContain(payload.includes(FORGED) ? FORGED : '\\u001b[31mred');
  });
});

describe('label names that are not well-formed Unicode', () => {
  it('render on every channel (the silence link leaves them out instead of failing the message)', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.labels['pod\ud800'] = 'vllm-0';
    n.commonLabels['pod\ud800'] = 'vllm-0';
    expect(JSON.stringify(renderSlack(n))).toContain('silences/new');
    expect(JSON.stringify(renderFeishu(n))).toContain('silences/new');
    expect(renderText(n)).toContain('silences/new');
    expect(renderSns(n, TOPIC).Message).toContain('silences/new');
  });
});

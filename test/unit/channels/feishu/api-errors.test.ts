import { describe, expect, it } from 'vitest';
import { ContentRefusedError } from '../../../../shared/channels/channel.js';
import { FeishuApiError, feishuApiError } from '../../../../shared/channels/feishu/api-errors.js';

const names = {
  credentials: 'FEISHU_APP_ID and FEISHU_APP_SECRET',
  chat: 'FEISHU_CHAT_ID',
  apiUrl: 'FEISHU_API_URL',
  mention: 'channels.x.mention',
};
const classify = (status: number, code?: number, msg = '', resetSeconds?: number) =>
  feishuApiError('feishu', { status, code, msg, resetSeconds }, names, 'send');

describe('Feishu Open API errors', () => {
  it('rate limits are retryable with their reset, whatever the status', () => {
    for (const [status, code] of [
      [429, 99991400],
      [400, 99991400],
      [400, 230020],
      [200, 11232],
    ] as const) {
      const err = classify(status, code, 'too many', 52);
      expect(err).toMatchObject({ retryable: true, reason: 'rate_limited', retryAfterMs: 52_000 });
    }
  });

  it("Feishu's own trouble and 5xx are retryable; a body that is not Feishu's decides by status", () => {
    expect(classify(400, 230049)).toMatchObject({ retryable: true });
    expect(classify(500, 1500)).toMatchObject({ retryable: true, reason: 'server_error' });
    expect(classify(502)).toMatchObject({ retryable: true });
    expect(classify(404)).toMatchObject({ retryable: false, reason: 'client_error' });
  });

  it('permanent errors name the setting to fix', () => {
    expect(classify(400, 10015, 'wrong app secret').message).toMatch(
      /check FEISHU_APP_ID and FEISHU_APP_SECRET, and FEISHU_API_URL.*open\.larksuite\.com/,
    );
    expect(classify(400, 230002).message).toMatch(/bot is not in the chat.*check FEISHU_CHAT_ID/);
    expect(classify(400, 232009).message).toMatch(/dissolved.*FEISHU_CHAT_ID/);
    expect(classify(400, 10023).message).toMatch(/grant im:message\.urgent/);
    for (const code of [10015, 230002, 10023]) expect(classify(400, code)).toMatchObject({ retryable: false });
  });

  it('refused content may pass reduced; an <at> of an unknown user names the mention setting', () => {
    expect(classify(400, 230025)).toBeInstanceOf(ContentRefusedError);
    const at = classify(400, 230099, 'ErrCode: 100290; ErrMsg: There is an invalid user resource(at/person)');
    expect(at).toBeInstanceOf(ContentRefusedError);
    expect(at.message).toMatch(/check channels\.x\.mention/);
  });

  it('other codes are permanent and keep their code (the channel acts on a message that is gone)', () => {
    const gone = classify(400, 230110, 'deleted');
    expect(gone).toBeInstanceOf(FeishuApiError);
    expect((gone as FeishuApiError).code).toBe(230110);
    expect(gone.retryable).toBe(false);
  });
});

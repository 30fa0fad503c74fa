import { describe, expect, it } from 'vitest';
import { slackSignature, slackSignatureProblem } from '../../../../shared/channels/slack/signature.js';
import { Secret } from '../../../../shared/core/secret.js';

// The worked example of https://api.slack.com/authentication/verifying-requests-from-slack
const SECRET = new Secret('8f742231b10e8888abcd99yyyzzz85a5');
const TIMESTAMP = '1531420618';
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const AT = Number(TIMESTAMP) * 1000;

describe('Slack request signature', () => {
  it("computes Slack's documented example", () => {
    expect(slackSignature(SECRET, TIMESTAMP, BODY)).toBe(SIGNATURE);
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, BODY, AT)).toBeUndefined();
  });

  it('accepts a timestamp up to 5 minutes either side of now, refuses one beyond', () => {
    expect(
      slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, BODY, AT + 300_000),
    ).toBeUndefined();
    expect(
      slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, BODY, AT - 300_000),
    ).toBeUndefined();
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, BODY, AT + 301_000)).toMatch(
      /more than 5 minutes/,
    );
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, BODY, AT - 301_000)).toMatch(
      /more than 5 minutes/,
    );
  });

  it('refuses a changed body, timestamp, signature or secret', () => {
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE }, `${BODY}x`, AT)).toMatch(
      /does not match/,
    );
    expect(slackSignatureProblem(SECRET, { timestamp: '1531420619', signature: SIGNATURE }, BODY, AT)).toMatch(
      /does not match/,
    );
    expect(
      slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE.replace(/3$/, '4') }, BODY, AT),
    ).toMatch(/does not match/);
    expect(
      slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: SIGNATURE.toUpperCase() }, BODY, AT),
    ).toMatch(/does not match/);
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: 'v0=ab' }, BODY, AT)).toMatch(
      /does not match/,
    );
    expect(
      slackSignatureProblem(
        new Secret('another-signing-secret-000'),
        { timestamp: TIMESTAMP, signature: SIGNATURE },
        BODY,
        AT,
      ),
    ).toMatch(/does not match/);
  });

  it('refuses missing headers and a timestamp that is not epoch seconds', () => {
    expect(slackSignatureProblem(SECRET, { signature: SIGNATURE }, BODY, AT)).toMatch(/missing/);
    expect(slackSignatureProblem(SECRET, { timestamp: TIMESTAMP }, BODY, AT)).toMatch(/missing/);
    expect(slackSignatureProblem(SECRET, { timestamp: '1531420618.5', signature: SIGNATURE }, BODY, AT)).toMatch(
      /epoch seconds/,
    );
  });

  it('never names the secret in a problem', () => {
    const problem = slackSignatureProblem(SECRET, { timestamp: TIMESTAMP, signature: 'v0=00' }, BODY, AT)!;
    expect(problem).not.toContain(SECRET.reveal());
  });
});

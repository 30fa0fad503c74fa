/**
 * A loopback stand-in for Amazon SNS `Publish`, speaking the wire protocol the installed
 * `@aws-sdk/client-sns` uses: awsQuery — a form-encoded POST to `/` (`Action=Publish&Version=2010-03-31&…`,
 * attributes as `MessageAttributes.entry.N.Name` / `.Value.DataType` / `.Value.StringValue`),
 * answered with `PublishResponse` XML carrying a `MessageId`, or an `ErrorResponse` XML.
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 * @see https://smithy.io/2.0/aws/protocols/aws-query-protocol.html
 */
import { randomUUID } from 'node:crypto';
import { startLoopback, type RecordedRequest, type ScriptedReply } from './loopback.js';

const XMLNS = 'http://sns.amazonaws.com/doc/2010-03-31/';

export interface DecodedAttribute {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}

/** One `Publish` call as SNS would read it. */
export interface DecodedPublish {
  /** Every form parameter, decoded, as sent. */
  params: Record<string, string>;
  TopicArn?: string;
  Subject?: string;
  Message?: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
  MessageAttributes: Record<string, DecodedAttribute>;
  /** The id this stand-in answered with. */
  messageId: string;
}

/** An error to answer the next request with, as SNS does (`Throttled` 429, `NotFound` 404, `InternalError` 500…). */
export interface SnsFault {
  status: number;
  code: string;
  message: string;
}

export interface SnsStandIn {
  /** Pass as the SDK's `endpoint`. */
  endpoint: string;
  publishes: DecodedPublish[];
  requests: RecordedRequest[];
  /** Answers the next request with this error instead of a `MessageId`. */
  failNext(fault: SnsFault): void;
  close(): Promise<void>;
}

/** Decodes the awsQuery form of a `Publish` request. */
export function decodePublish(body: Buffer): Omit<DecodedPublish, 'messageId'> {
  const params = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
  const MessageAttributes: Record<string, DecodedAttribute> = {};
  for (let n = 1; params[`MessageAttributes.entry.${n}.Name`] !== undefined; n++) {
    const prefix = `MessageAttributes.entry.${n}.Value`;
    const attribute: DecodedAttribute = { DataType: params[`${prefix}.DataType`] ?? '' };
    if (params[`${prefix}.StringValue`] !== undefined) attribute.StringValue = params[`${prefix}.StringValue`];
    if (params[`${prefix}.BinaryValue`] !== undefined) attribute.BinaryValue = params[`${prefix}.BinaryValue`];
    MessageAttributes[params[`MessageAttributes.entry.${n}.Name`]!] = attribute;
  }
  const { TopicArn, Subject, Message, MessageGroupId, MessageDeduplicationId } = params;
  return { params, TopicArn, Subject, Message, MessageGroupId, MessageDeduplicationId, MessageAttributes };
}

const xmlEscape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function errorReply(fault: SnsFault, requestId: string): ScriptedReply {
  const type = fault.status >= 500 ? 'Receiver' : 'Sender';
  return {
    status: fault.status,
    headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
    body:
      `<ErrorResponse xmlns="${XMLNS}"><Error><Type>${type}</Type><Code>${xmlEscape(fault.code)}</Code>` +
      `<Message>${xmlEscape(fault.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  };
}

/**
 * Starts the stand-in on 127.0.0.1. Requests that are not a signed `Publish` with a `TopicArn`
 * and a `Message` get a 400, and so does an empty String attribute value (as SNS answers), so a
 * wrong wire format fails the test.
 */
export async function startSnsServer(): Promise<SnsStandIn> {
  const publishes: DecodedPublish[] = [];
  const faults: SnsFault[] = [];
  const server = await startLoopback((request) => {
    const requestId = randomUUID();
    const fault = faults.shift();
    if (fault) return errorReply(fault, requestId);
    const decoded = decodePublish(request.body);
    const signed = String(request.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 ');
    if (
      request.method !== 'POST' ||
      decoded.params.Action !== 'Publish' ||
      decoded.params.Version !== '2010-03-31' ||
      !signed
    ) {
      return errorReply(
        { status: 400, code: 'InvalidAction', message: 'expected a signed Publish, Version 2010-03-31' },
        requestId,
      );
    }
    if (!decoded.TopicArn || !decoded.Message) {
      return errorReply(
        { status: 400, code: 'InvalidParameter', message: 'TopicArn and Message are required' },
        requestId,
      );
    }
    const empty = Object.entries(decoded.MessageAttributes).find(([, a]) => a.DataType === 'String' && !a.StringValue);
    if (empty) {
      return errorReply(
        {
          status: 400,
          code: 'ParameterValueInvalid',
          message: `Message attribute '${empty[0]}' must contain non-empty message attribute value`,
        },
        requestId,
      );
    }
    const messageId = randomUUID();
    publishes.push({ ...decoded, messageId });
    return {
      status: 200,
      headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
      body:
        `<PublishResponse xmlns="${XMLNS}"><PublishResult><MessageId>${messageId}</MessageId></PublishResult>` +
        `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></PublishResponse>`,
    };
  });
  return {
    endpoint: server.url,
    publishes,
    requests: server.requests,
    failNext: (fault) => void faults.push(fault),
    close: () => server.close(),
  };
}

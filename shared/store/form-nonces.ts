/**
 * The acknowledgement form's nonces, each taken once (`shared/ack/csrf.ts` mints them per page view): a
 * POST replayed with the same nonce, MAC and cookie (a proxy's log, a browser's history, a captured request)
 * finds its nonce taken and changes nothing. In the one table (partition key `pk`, TTL `expiresAt`):
 * `formnonce#<SHA-256 of the nonce, hex>`, written by one conditional `PutItem`, kept until the link's token
 * expires (after that the token itself refuses the POST). An expired item not yet deleted (DynamoDB deletes
 * late; dynalite never) counts as taken all the same: its token has expired.
 * @see https://cheatsheetseries.owasp.org/cheatsheets/Cross-Site_Request_Forgery_Prevention_Cheat_Sheet.html
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ifConditionHolds } from './conditional.js';

/** Port; one adapter: {@link DynamoDbFormNonceStore}. */
export interface FormNonceStore {
  /**
   * Takes `nonce` (one conditional write).
   * @param expiresAtMs when the record may go, epoch milliseconds (the link's expiry)
   * @returns true the first time; false when it was taken before
   * @throws the store's error
   */
  take(nonce: string, expiresAtMs: number): Promise<boolean>;
}

const nonceKey = (nonce: string) => `formnonce#${createHash('sha256').update(nonce, 'utf8').digest('hex')}`;

export class DynamoDbFormNonceStore implements FormNonceStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, options: { tableName: string }) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
  }

  async take(nonce: string, expiresAtMs: number): Promise<boolean> {
    const put = new PutCommand({
      TableName: this.#table,
      Item: { pk: nonceKey(nonce), expiresAt: Math.ceil(expiresAtMs / 1000) },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    return (await ifConditionHolds(this.#doc.send(put))) !== undefined;
  }
}

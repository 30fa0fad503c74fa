// The dedupe relay (bench/floor-shared.ts): the bare relay (relay.mjs) plus the least store work dedupe needs,
// through the same AWS SDK against the same store: one batched eventually consistent read of the group's alerts
// (a hint, as the product's: the conditional write decides), one conditional PutItem per alert not seen before, then one Slack message for the new ones. Each request asks for
// ReturnConsumedCapacity TOTAL (it changes only the answer); `GET /units` answers the units consumed so far.
import { BatchGetItemCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createServer } from 'node:http';

const table = process.env.TABLE_NAME;
const db = new DynamoDBClient({ endpoint: process.env.AWS_ENDPOINT_URL_DYNAMODB });
const units = { rcu: 0, wcu: 0 };
async function handle(req, res) {
  if (req.method === 'GET') return void res.writeHead(200).end(JSON.stringify(units));
  let body = '';
  for await (const chunk of req) body += chunk;
  const { groupKey, alerts } = JSON.parse(body);
  const key = (a) => `relay#${a.fingerprint}#${a.status}#${a.startsAt}`;
  const keys = [...new Set(alerts.map(key))];
  const seen = new Set();
  for (let i = 0; i < keys.length; i += 100) {
    const got = await db.send(
      new BatchGetItemCommand({
        RequestItems: {
          [table]: { Keys: keys.slice(i, i + 100).map((pk) => ({ pk: { S: pk } })), ConsistentRead: false },
        },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );
    for (const c of got.ConsumedCapacity ?? []) units.rcu += c.CapacityUnits ?? 0;
    for (const item of got.Responses?.[table] ?? []) seen.add(item.pk.S);
  }
  const fresh = alerts.filter((a) => !seen.has(key(a)));
  await Promise.all(
    fresh.map((a) =>
      db
        .send(
          new PutItemCommand({
            TableName: table,
            Item: { pk: { S: key(a) }, groupKey: { S: groupKey } },
            ConditionExpression: 'attribute_not_exists(pk)',
            ReturnConsumedCapacity: 'TOTAL',
          }),
        )
        .then((put) => void (units.wcu += put.ConsumedCapacity?.CapacityUnits ?? 0))
        .catch((err) => {
          if (err.name !== 'ConditionalCheckFailedException') throw err;
        }),
    ),
  );
  const text = fresh.map((a) => `${a.status}: ${a.labels.alertname} ${a.annotations.summary ?? ''}`).join('\n');
  const sent = fresh.length
    ? await fetch(process.env.SLACK_WEBHOOK_URL, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      })
    : { ok: true };
  res.writeHead(sent.ok ? 200 : 502).end();
}

// A failed store call or send answers 500 with its message (the bench reports it); unanswered, the async
// handler's rejection would end this process and every later post would read "other side closed".
const server = createServer((req, res) =>
  handle(req, res).catch((err) => {
    console.error(`dedupe relay: ${err.name}: ${err.message}`);
    if (!res.headersSent) res.writeHead(500);
    res.end(`${err.name}: ${err.message}`);
  }),
);
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));

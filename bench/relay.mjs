// The floor the product is measured against (bench/floor.ts): a bare relay that parses the
// Alertmanager payload and posts one Slack message. No dedupe, enrichment, other channels or retries.
import { createServer } from 'node:http';
const server = createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const { alerts } = JSON.parse(body);
  const text = alerts.map((a) => `${a.status}: ${a.labels.alertname} ${a.annotations.summary ?? ''}`).join('\n');
  const sent = await fetch(process.env.SLACK_WEBHOOK_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  res.writeHead(sent.ok ? 200 : 502).end();
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));

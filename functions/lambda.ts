/**
 * AWS Lambda entry (Function URL): the same app as `npm start`, served by `hono/aws-lambda`.
 * Configuration is read and validated once, at cold start. Every line an invocation logs carries
 * its `awsRequestId` (Lambda's text log format does not add it to lines written to stdout).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { handle } from 'hono/aws-lambda';
import { createApp } from '../shared/app.js';
import { loadConfig } from '../shared/config.js';
import { createLogger, withLogFields } from '../shared/logger.js';
import { createDeps } from '../shared/runtime.js';
import { withSecretSettings } from '../shared/settings-secret.js';
import { AWS_CLIENT_DEFAULTS } from '../shared/aws-clients.js';

const config = loadConfig(await withSecretSettings(process.env, new SecretsManagerClient(AWS_CLIENT_DEFAULTS)));
const logger = createLogger(config.logLevel);
for (const warning of config.warnings) logger.warn('setting adjusted', { ...warning });
const app = createApp(config, createDeps(config, { dynamodb: new DynamoDBClient(AWS_CLIENT_DEFAULTS), inProcessTimers: false }, logger));

const serve = handle(app);

export const handler: typeof serve = (event, lambdaContext) => withLogFields({ awsRequestId: lambdaContext?.awsRequestId }, () => serve(event, lambdaContext));

/**
 * Reads and checks the routing file once, at start-up: YAML or JSON (JSON is YAML), validated with
 * the zod schema; every problem names the file, the line and the field
 * (`routing.yml:14: routes[1].channels[0]: no channel named "oncal"`). Secret references are looked
 * up in the settings and wrapped in {@link Secret}; their values never appear in an error.
 */
import { readFileSync } from 'node:fs';
import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type * as z from '../core/zod.js';
import { Secret } from '../core/secret.js';
import type { Route } from './router.js';
import { accepts, mentionProblem, parseMention, type MentionPlatform } from '../channels/mentions.js';
import {
  ENV_CHANNEL_NAMES,
  mentionPlatformOf,
  resolveChannel as resolveEntry,
  secretNamesOf,
  type ChannelInstance,
  type ChannelSpec,
} from '../channels/registry.js';
import { webhookUrlProblem, type SecretRef } from '../channels/settings.js';
import { routingFileSchema, type RoutingFile } from './schema.js';
import { toJsProblem, yamlProblem } from './yaml-problems.js';
import { PipelineError } from '../core/errors.js';

export interface RoutingConfig {
  /** The file as given (for messages). */
  file: string;
  channels: ChannelInstance[];
  routes: Route[];
  defaultChannels: string[];
  /** `flapping.window`, milliseconds; unset means the pipeline's default. `0` turns marking off. */
  flapWindowMs?: number;
}

/** Thrown by {@link loadRoutingFile}; `problems` are `file:line: field: problem`, all of them. */
export class RoutingError extends PipelineError<'invalid_routing_file'> {
  constructor(readonly problems: string[]) {
    super(`invalid routing file:\n  ${problems.join('\n  ')}`, 'invalid_routing_file');
    this.name = 'RoutingError';
  }
}

export interface LoadRoutingOptions {
  /** Where secret references and `SNS_TOPIC_ARN` are looked up (the environment, with the settings secret laid over it). */
  settings: Record<string, string | undefined>;
  /** Channels the environment variables already define (`slack`, `feishu`, `sns`); routes may name them, the file may not redefine them. */
  envChannels?: string[];
}

type Path = (string | number)[];

/** Parses and validates the text; `locate` turns a field path into `file:line: field`. */
function parse(text: string, file: string): { data?: RoutingFile; problems: string[]; locate: (path: Path) => string } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const locate = (path: Path) => `${file}:${lineOf(doc, lines, path)}: ${formatPath(path)}`;
  const at = ({ line, message }: { line: number; message: string }) => `${file}:${line}: ${message}`;
  if (doc.errors.length) return { problems: doc.errors.map((e) => at(yamlProblem(e, text, lines))), locate };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    return { problems: [at(toJsProblem(err, doc, text, lines))], locate };
  }
  const result = routingFileSchema.safeParse(value ?? {});
  if (result.success) return { data: result.data, problems: [], locate };
  return { problems: result.error.issues.map((i) => `${locate(issuePath(i))}: ${issueMessage(i)}`), locate };
}

/**
 * Keys are echoed only when they are names (letters, digits, `_ . -`): a key that is not (a URL
 * pasted as a key) may be a secret, and the line number already points at it.
 */
const NAME_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const shownKey = (key: string) => (NAME_KEY.test(key) ? key : '<key>');

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys' && !issue.keys.every((k) => NAME_KEY.test(k)))
    return `unknown field ${issue.keys.map((k) => `"${shownKey(k)}"`).join(', ')}`;
  return issue.message;
}

function issuePath(issue: z.core.$ZodIssue): Path {
  const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  // An unknown key: point at the key itself.
  return issue.code === 'unrecognized_keys' && issue.keys.length ? [...path, issue.keys[0]!] : path;
}

/** 1-based line of the deepest node of `path` that exists in the document (1 for the root). */
function lineOf(doc: Document, lines: LineCounter, path: Path): number {
  for (let p = path; ; p = p.slice(0, -1)) {
    const node = p.length ? doc.getIn(p, true) : doc.contents;
    if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
    if (p.length === 0) return 1;
  }
}

/** `['routes', 1, 'channels', 0]` → `routes[1].channels[0]`. */
function formatPath(path: Path): string {
  return (
    path.reduce<string>(
      (out, p) => (typeof p === 'number' ? `${out}[${p}]` : out ? `${out}.${shownKey(p)}` : shownKey(p)),
      '',
    ) || '(file)'
  );
}

/**
 * Reads, validates and resolves the routing file.
 * @param path the file (YAML or JSON)
 * @throws RoutingError listing every problem with its line and field
 */
export function loadRoutingFile(path: string, options: LoadRoutingOptions): RoutingConfig {
  const { data, problems, locate } = parse(readText(path), path);
  if (!data) throw new RoutingError(problems);
  const envChannels = options.envChannels ?? [];
  checkReferences(data, envChannels, locate, problems);
  checkMentions(data, options.settings, locate, problems);
  const file = { settings: options.settings, locate, problems };
  const channels = Object.entries(data.channels).map(([name, spec]) => resolveChannel(name, spec, file));
  if (problems.length) throw new RoutingError(problems);
  return {
    file: path,
    channels: channels.filter((c): c is ChannelInstance => c !== undefined),
    routes: data.routes,
    defaultChannels: data.default.channels,
    flapWindowMs: data.flapping?.window,
  };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new RoutingError([
      `${path}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    ]);
  }
}

function checkReferences(
  data: RoutingFile,
  envChannels: readonly string[],
  locate: (p: Path) => string,
  problems: string[],
): void {
  for (const name of Object.keys(data.channels)) {
    if (envChannels.includes(name))
      problems.push(
        `${locate(['channels', name])}: "${name}" is already defined by the environment (${name.toUpperCase()}_… settings); pick another name`,
      );
  }
  checkRoutes(data, envChannels, locate, problems);
}

/** Every channel a route or `default` names is an instance of the file or one of `envChannels`. */
function checkRoutes(
  data: RoutingFile,
  envChannels: readonly string[],
  locate: (p: Path) => string,
  problems: string[],
): void {
  const known = new Set([...Object.keys(data.channels), ...envChannels]);
  const check = (names: string[], path: Path) =>
    names.forEach((name, i) => {
      if (!known.has(name))
        problems.push(`${locate([...path, i])}: no channel named "${name}" (known: ${[...known].join(', ')})`);
    });
  data.routes.forEach((route, i) => check(route.channels, ['routes', i, 'channels']));
  check(data.default.channels, ['default', 'channels']);
}

/** The platform whose mentions an environment-defined channel renders (`slack`, `feishu`); `undefined`: none. */
function envPlatform(name: string, settings: Record<string, string | undefined>): MentionPlatform | undefined {
  if (name === 'slack') return 'slack';
  if (name === 'feishu') return settings.FEISHU_CHAT_ID ? 'feishu-app' : 'feishu-bot';
  return undefined;
}

/** Each route's `mention` entries: a mention form, and one that some channel of the route renders. */
function checkMentions(
  data: RoutingFile,
  settings: Record<string, string | undefined>,
  locate: (p: Path) => string,
  problems: string[],
): void {
  const platformOf = (name: string) => {
    const spec = data.channels[name];
    return spec ? mentionPlatformOf(spec) : envPlatform(name, settings);
  };
  data.routes.forEach((route, i) => {
    const platforms = route.channels.flatMap((name) => platformOf(name) ?? []);
    route.mention?.forEach((entry, j) => {
      const where = locate(['routes', i, 'mention', j]);
      const shown = JSON.stringify(entry.slice(0, 64));
      if (!parseMention(entry))
        problems.push(
          `${where}: ${shown} is not a mention (Feishu: ou_…, user_id:…, an email, @all; Slack: U…, S…, @here, @channel)`,
        );
      else if (!platforms.some((p) => accepts(p, entry)))
        problems.push(
          `${where}: no channel of this route can mention ${shown} (${platforms.length ? platforms.map((p) => mentionProblem(p, entry)).join('; ') : 'none of its channels @-mentions anyone'})`,
        );
    });
  });
}

/**
 * The channel `name` of the file, its secrets looked up in the settings; `undefined` when it has a problem.
 * @param file the settings, where in the file a path is (`line 12: channels.x.field`), and the problems found so far
 */
function resolveChannel(
  name: string,
  spec: ChannelSpec,
  {
    settings,
    locate,
    problems,
  }: { settings: Record<string, string | undefined>; locate: (p: Path) => string; problems: string[] },
): ChannelInstance | undefined {
  const problem = (field: string, message: string) => problems.push(`${locate(['channels', name, field])}: ${message}`);
  const secret = (ref: SecretRef, field: string, url: boolean): Secret | undefined => {
    const value = settings[ref.secret];
    const urlProblem = value && url ? webhookUrlProblem(value) : undefined;
    const message = !value
      ? `setting ${ref.secret} is not set (an environment variable, or a key of the settings secret in AWS)`
      : urlProblem && `setting ${ref.secret} ${urlProblem}`;
    if (message) problem(field, message);
    return message ? undefined : new Secret(value!);
  };
  return resolveEntry(name, spec, { secret, problem, settings });
}

/**
 * The setting names the routing file references as secrets, so the settings secret can lay them
 * over the environment. Returns `[]` for a file that does not load: {@link loadRoutingFile} reports that.
 */
export function routingSecretNames(path: string): string[] {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(readText(path), path);
  } catch {
    return [];
  }
  const names = Object.values(parsed.data?.channels ?? {}).flatMap(secretNamesOf);
  return [...new Set(names)];
}

/**
 * Validates a routing file without looking up secrets (for `cdk synth`), every channel its routes name
 * included (an instance of the file, or a name the environment's channels may have); returns its channel
 * instances' names, the SNS topics it names, so the function can be allowed to publish to them, and the
 * settings it expects in the secret.
 * @throws RoutingError naming line and field of each problem
 */
export function describeRoutingFile(path: string): {
  channelNames: string[];
  /** Each SNS instance's `topicArn`, `undefined` for one that publishes to `SNS_TOPIC_ARN`. */
  snsTopics: Record<string, string | undefined>;
  topicArns: string[];
  secretNames: string[];
  usesDefaultTopic: boolean;
} {
  const { data, problems, locate } = parse(readText(path), path);
  if (!data) throw new RoutingError(problems);
  // The environment's channels are known only at start-up: a route may name any it could define.
  checkRoutes(data, ENV_CHANNEL_NAMES, locate, problems);
  if (problems.length) throw new RoutingError(problems);
  const sns = Object.values(data.channels).filter((c) => c.type === 'sns');
  return {
    channelNames: Object.keys(data.channels),
    snsTopics: Object.fromEntries(
      Object.entries(data.channels).flatMap(([name, c]) => (c.type === 'sns' ? [[name, c.topicArn]] : [])),
    ),
    topicArns: [...new Set(sns.flatMap((c) => (c.topicArn ? [c.topicArn] : [])))],
    secretNames: routingSecretNames(path),
    usesDefaultTopic: sns.some((c) => !c.topicArn),
  };
}

/**
 * How a channel type is configured by environment variables, declared by its `settings.ts` as the `env`
 * of its `ChannelType`: each variable with its zod schema, which of them are secrets, the problems of
 * variables that only make sense together, and what the validated variables yield (the channel named
 * after the type, an escalation target, options the rest of the service needs). The configuration
 * (`shared/runtime/config.ts`), the settings secret, the CDK stack's secret and the routing file's
 * reserved names all iterate `CHANNEL_TYPES` through {@link channelEnv}: none of them names a channel.
 */
import * as z from '../core/zod.js';

/** A type's variables: each name with the schema that reads its raw string (unset or `""`: unset). */
export type EnvShape = Record<string, z.ZodMiniType>;
/** The variables as validated. */
export type EnvValues<S extends EnvShape> = { [K in keyof S]: z.output<S[K]> };

/** What the validated variables of one type yield. */
export interface EnvYield<Instance, Options> {
  /**
   * Channels that get alerts when no routing file picks otherwise, named after the type (`slack`,
   * `feishu`): the routing file may route to them, not define an instance of the same name. `undefined`
   * entries (a variable not set) are skipped.
   */
  channels?: (Instance | undefined)[];
  /**
   * Escalation targets (`shared/escalation`): the channels that get an unacknowledged critical alert,
   * each under the variable that configures it (start-up errors name it).
   */
  escalation?: Record<string, Instance | undefined>;
  /** What else the service needs of these variables (the Slack app's signing secret): `Config.channelOptions`. */
  options?: Options;
}

/** A channel type's environment variables; build one with {@link envSettings} so its types are inferred. */
export interface EnvSettings<S extends EnvShape, Instance, Options = undefined> {
  /** Each variable the type reads, with its schema: a bad value stops start-up with `NAME: message`. */
  variables: S;
  /** The variables that hold secrets: AWS reads them from the settings secret; logs never show them. */
  secrets: readonly (keyof S & string)[];
  /**
   * Problems of variables that only make sense together, each `NAME: problem` (never a value).
   * @param settings every setting, trimmed: for the presence of another (`PUBLIC_URL`)
   */
  problems?(values: EnvValues<S>, settings: Record<string, string | undefined>): string[];
  /** What the validated variables yield. */
  read(values: EnvValues<S>): EnvYield<Instance, Options>;
}

/** `declaration`, its types inferred from its variables' schemas. */
export const envSettings = <S extends EnvShape, Instance, Options = undefined>(
  declaration: EnvSettings<S, Instance, Options>,
): EnvSettings<S, Instance, Options> => declaration;

/** `make(value)` when the variable is set, else `undefined`. */
export const ifSet = <T>(value: string | undefined, make: (value: string) => T): T | undefined =>
  value === undefined ? undefined : make(value);

/**
 * Any type's declaration, as `ChannelType.env` holds it and {@link channelEnv} reads it: its variables'
 * names and values loosened (`never` parameters: the registry passes each type the values of its own schema).
 */
export interface DeclaredEnv<Instance> {
  variables: EnvShape;
  secrets: readonly string[];
  problems?(values: never, settings: Record<string, string | undefined>): string[];
  read(values: never): EnvYield<Instance, unknown>;
}

/** What the environment yields of every type, in registry order. */
export interface EnvChannels<Instance, Options> {
  channels: Instance[];
  /** The escalation targets, each with the variable that configures it. */
  escalation: { setting: string; instance: Instance }[];
  /** Each type's options, by type. */
  options: Options;
  /** Problems of variables that only make sense together. */
  problems: string[];
}

/**
 * The environment side of a registry of channel types.
 * @param types the registry (`CHANNEL_TYPES`): type name → its `ChannelType`
 */
export function channelEnv<Instance, Options>(types: Record<string, { schema: unknown; env?: DeclaredEnv<unknown> }>) {
  const declared = Object.entries(types).flatMap(([type, t]) => (t.env ? [[type, t.env] as const] : []));
  const variables: EnvShape = Object.assign({}, ...declared.map(([, env]) => env.variables));
  return {
    /** Every variable of every type, in registry order, as one object schema. */
    schema: z.object(variables),
    /** The variables that hold secrets. */
    secrets: declared.flatMap(([, env]) => env.secrets),
    /**
     * @param values the variables as validated by `schema`
     * @param settings every setting, trimmed
     */
    read(
      values: Record<string, unknown>,
      settings: Record<string, string | undefined>,
    ): EnvChannels<Instance, Options> {
      const out: EnvChannels<unknown, Record<string, unknown>> = {
        channels: [],
        escalation: [],
        options: {},
        problems: [],
      };
      for (const [type, env] of declared) {
        out.problems.push(...(env.problems?.(values as never, settings) ?? []));
        const { channels = [], escalation = {}, options } = env.read(values as never);
        for (const instance of channels) if (instance !== undefined) out.channels.push(instance);
        for (const [setting, instance] of Object.entries(escalation))
          if (instance !== undefined) out.escalation.push({ setting, instance });
        if (options !== undefined) out.options[type] = options;
      }
      return out as EnvChannels<Instance, Options>;
    },
  };
}

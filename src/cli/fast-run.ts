/**
 * The fast path of `navi run`: a plain invocation is parsed with node:util's parseArgs, so the
 * most common command (and every benchmark of it) skips loading yargs and drawing its help
 * text (~100 ms of a one-shot run). Anything unusual — `--help`, an unknown or repeated flag,
 * a bad value — returns null and goes through yargs, which owns help and error messages.
 * The options come from the flag table (flags.ts), as yargs' do.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { camelCase, FLAGS, type Flag } from './flags.js';
import type { GlobalArgs } from './global-args.js';
import { firstPositional } from './shorthand.js';

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

/** The flags `navi run` takes: the global ones and its own. */
const RUN_FLAGS: readonly Flag[] = FLAGS.filter((f) => f.commands === 'global' || f.commands.includes('run'));

/** parseArgs options for every spelling, and which flag each spelling is. */
function buildOptions(): { options: ParseOptions; flagOf: Map<string, Flag> } {
  const options: ParseOptions = {};
  const flagOf = new Map<string, Flag>();
  for (const flag of RUN_FLAGS) {
    const type = flag.kind === 'boolean' ? 'boolean' : 'string';
    const longs = [flag.name, ...(flag.aliases ?? []).filter((a) => a.length > 1)];
    const shorts = (flag.aliases ?? []).filter((a) => a.length === 1);
    // parseArgs takes one letter per option: the n-th letter goes to the n-th long spelling.
    if (shorts.length > longs.length) throw new Error(`flag table: --${flag.name} has more one-letter aliases than long spellings`);
    longs.forEach((long, i) => {
      const short = shorts[i];
      options[long] = short !== undefined ? { type, short } : { type };
      flagOf.set(long, flag);
    });
    if (flag.kind === 'boolean') {
      options[`no-${flag.name}`] = { type: 'boolean' };
      flagOf.set(`no-${flag.name}`, flag);
    }
  }
  return { options, flagOf };
}

const { options: OPTIONS, flagOf: FLAG_OF } = buildOptions();

/**
 * `navi run` flags as yargs would produce them, or null to let yargs handle the invocation.
 * Global flags may come before the command, as scripts write them (`navi --ollama-host URL run
 * …`): they mean what they mean after it.
 */
export function parseRunFast(args: readonly string[]): (GlobalArgs & Record<string, unknown>) | null {
  const command = firstPositional(args);
  if (command === undefined || args[command] !== 'run' || args[command - 1] === '--') return null;
  // Only options before `run` (firstPositional skipped them), then everything after it.
  let parsed;
  try {
    parsed = parseArgs({ args: [...args.slice(0, command), ...args.slice(command + 1)], allowPositionals: true, strict: true, tokens: true, options: OPTIONS });
  } catch {
    return null;
  }
  const argv: Record<string, unknown> = {};
  for (const flag of RUN_FLAGS) if (flag.commands === 'global' && flag.default !== undefined) argv[camelCase(flag.name)] = flag.default;
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option') {
      // A positional among the leading words: not `navi [global flags] run …` after all.
      if (token.index < command) return null;
      continue;
    }
    const flag = FLAG_OF.get(token.name);
    // Given twice (or as two aliases, or --x and --no-x): yargs decides and says what happens.
    if (flag === undefined || seen.has(flag.name)) return null;
    // Before the command, only a global flag is the same flag wherever it stands.
    if (token.index < command && flag.commands !== 'global') return null;
    seen.add(flag.name);
    const value = flagValue(flag, token.name, token.value);
    if (value === null) return null;
    argv[camelCase(flag.name)] = value;
  }
  return { ...(argv as unknown as GlobalArgs), ...argv, prompt: parsed.positionals };
}

/** The value as yargs would give it, or null when yargs should say what is wrong with it. */
function flagValue(flag: Flag, spelling: string, raw: string | undefined): unknown {
  switch (flag.kind) {
    case 'boolean':
      return spelling !== `no-${flag.name}`;
    case 'string':
      return raw ?? null;
    case 'choice':
      return raw !== undefined && (flag.choices ?? []).includes(raw) ? raw : null;
    case 'integer':
      // Not a whole number: yargs says so, naming the value (flag-values.ts).
      return raw !== undefined && /^\d+$/.test(raw) && Number(raw) >= (flag.min ?? 1) ? Number(raw) : null;
  }
}

/**
 * The fast path of `navi run`: a plain invocation is parsed with node:util's parseArgs, so the
 * most common command (and every benchmark of it) skips loading yargs and drawing its help
 * text (~100 ms of a one-shot run). Anything unusual — `--help`, an unknown or repeated flag,
 * a bad `--output` — returns null and goes through yargs, which owns help and error messages.
 */
import { parseArgs } from 'node:util';
import type { GlobalArgs } from './global-args.js';

const OUTPUTS = new Set(['text', 'json', 'stream-json']);

/** `navi run` flags as yargs would produce them, or null to let yargs handle the invocation. */
export function parseRunFast(args: readonly string[]): (GlobalArgs & Record<string, unknown>) | null {
  if (args[0] !== 'run') return null;
  let parsed;
  try {
    parsed = parseArgs({
      args: args.slice(1),
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        cwd: { type: 'string' },
        config: { type: 'string' },
        output: { type: 'string', short: 'o' },
        quiet: { type: 'boolean', short: 'q' },
        color: { type: 'boolean' },
        'no-color': { type: 'boolean' },
        db: { type: 'string' },
        'ollama-host': { type: 'string' },
        model: { type: 'string', short: 'm' },
        profile: { type: 'string', short: 'p' },
        file: { type: 'string', short: 'f' },
        session: { type: 'string', short: 's' },
        'max-iterations': { type: 'string' },
        loop: { type: 'boolean' },
        'no-loop': { type: 'boolean' },
      },
    });
  } catch {
    return null;
  }
  const names = parsed.tokens.filter((t) => t.kind === 'option').map((t) => t.name);
  if (new Set(names).size !== names.length) return null;
  const v = parsed.values;
  const output = v.output ?? 'text';
  if (!OUTPUTS.has(output)) return null;
  if ((v.color && v['no-color']) || (v.loop && v['no-loop'])) return null;
  const argv: GlobalArgs & Record<string, unknown> = {
    output: output as GlobalArgs['output'],
    quiet: v.quiet ?? false,
    color: v['no-color'] !== true,
    prompt: parsed.positionals,
  };
  if (v.cwd !== undefined) argv.cwd = v.cwd;
  if (v.config !== undefined) argv.config = v.config;
  if (v.db !== undefined) argv.db = v.db;
  if (v['ollama-host'] !== undefined) argv.ollamaHost = v['ollama-host'];
  if (v.model !== undefined) argv.model = v.model;
  if (v.profile !== undefined) argv.profile = v.profile;
  if (v.file !== undefined) argv.file = v.file;
  if (v.session !== undefined) argv.session = v.session;
  if (v['max-iterations'] !== undefined) {
    // Not a whole number: yargs says so, naming the value (flag-values.ts).
    if (!/^\d+$/.test(v['max-iterations'])) return null;
    argv.maxIterations = Number(v['max-iterations']);
  }
  if (v.loop === true) argv.loop = true;
  if (v['no-loop'] === true) argv.loop = false;
  return argv;
}

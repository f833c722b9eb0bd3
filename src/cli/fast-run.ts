/**
 * The fast path of `navi run`: a plain invocation is parsed with node:util's parseArgs, so the
 * most common command (and every benchmark of it) skips loading yargs and drawing its help
 * text (~100 ms of a one-shot run). Anything unusual — `--help`, an unknown or repeated flag,
 * a bad `--output` — returns null and goes through yargs, which owns help and error messages.
 */
import { parseArgs } from 'node:util';
import type { GlobalArgs } from './global-args.js';

const OUTPUTS = new Set(['text', 'json', 'stream-json']);

/** Spellings of one flag (app.ts declares the same aliases to yargs). */
const ALIASES: Readonly<Record<string, string>> = { 'output-format': 'output', 'max-turns': 'max-iterations' };

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
        'output-format': { type: 'string' },
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
        'max-turns': { type: 'string' },
        loop: { type: 'boolean' },
        'no-loop': { type: 'boolean' },
        continue: { type: 'boolean', short: 'c' },
        'output-schema': { type: 'string' },
        'output-last-message': { type: 'string' },
        'append-system-prompt': { type: 'string' },
        'allowed-tools': { type: 'string' },
        'disallowed-tools': { type: 'string' },
        'project-instructions': { type: 'boolean' },
        'no-project-instructions': { type: 'boolean' },
        print: { type: 'boolean' },
      },
    });
  } catch {
    return null;
  }
  // Aliases count as the same flag: given twice, yargs decides (and says) what happens.
  const names = parsed.tokens.filter((t) => t.kind === 'option').map((t) => ALIASES[t.name] ?? t.name);
  if (new Set(names).size !== names.length) return null;
  const v = parsed.values;
  const output = v.output ?? v['output-format'] ?? 'text';
  if (!OUTPUTS.has(output)) return null;
  if ((v.color && v['no-color']) || (v.loop && v['no-loop']) || (v['project-instructions'] && v['no-project-instructions'])) return null;
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
  const maxIterations = v['max-iterations'] ?? v['max-turns'];
  if (maxIterations !== undefined) {
    // Not a whole number: yargs says so, naming the value (flag-values.ts).
    if (!/^\d+$/.test(maxIterations)) return null;
    argv.maxIterations = Number(maxIterations);
  }
  if (v.continue === true) argv.continue = true;
  if (v['output-schema'] !== undefined) argv.outputSchema = v['output-schema'];
  if (v['output-last-message'] !== undefined) argv.outputLastMessage = v['output-last-message'];
  if (v['append-system-prompt'] !== undefined) argv.appendSystemPrompt = v['append-system-prompt'];
  if (v['allowed-tools'] !== undefined) argv.allowedTools = v['allowed-tools'];
  if (v['disallowed-tools'] !== undefined) argv.disallowedTools = v['disallowed-tools'];
  if (v['no-project-instructions'] === true) argv.projectInstructions = false;
  if (v.loop === true) argv.loop = true;
  if (v['no-loop'] === true) argv.loop = false;
  return argv;
}

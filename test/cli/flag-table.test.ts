/**
 * Issue 18 item 8: one flag table (src/cli/flags.ts) drives yargs, the fast path, the
 * shorthand and completion. Every option a command's `--help` lists is in the table for that
 * command, and every table entry is in that command's `--help`; the fast path and the
 * shorthand read the same table.
 */
import { describe, expect, it } from 'vitest';
import { parseRunFast } from '../../src/cli/fast-run.js';
import { FLAGS, flagsOf, globalFlags, spellings, type CommandPath } from '../../src/cli/flags.js';
import { firstPositional } from '../../src/cli/shorthand.js';
import { cleanEnv, makeTempDir, runNavi } from '../support/cli.js';

const TIMEOUT_MS = 120_000;

/** Every command and subcommand navi has (a new one must be added here and to the table). */
const COMMAND_PATHS = [
  'run',
  'loop',
  'tasks list',
  'tasks show',
  'tasks validate',
  'runs list',
  'runs show',
  'sessions list',
  'sessions show',
  'sessions rm',
  'sessions compact',
  'profiles list',
  'profiles show',
  'memory list',
  'memory forget',
  'mcp list',
  'mcp tools',
  'db migrate',
  'completion',
  'doctor',
  'init',
  'serve',
];

/** The long flags listed under a help section (`Options:` or `Global options:`). */
function section(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(title);
  if (start < 0) return [];
  const out: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    // A flag's line starts with its spellings; continuation lines of a description do not.
    const m = /^ {2,6}((?:-{1,2}[a-zA-Z][\w-]*(?:, )?)+)/.exec(line);
    if (m) out.push(...(m[1] ?? '').split(', ').filter((s) => s.startsWith('--')));
  }
  return out.sort();
}

function longSpellings(flags: ReturnType<typeof flagsOf>): string[] {
  return flags.flatMap(spellings).filter((s) => s.startsWith('--')).sort();
}

describe('the flag table', () => {
  it('every option of every command is in the table for it, and the other way round', async () => {
    const cwd = makeTempDir('flag-table');
    const env = cleanEnv();
    const top = await runNavi(['--help'], { cwd, env });
    expect(section(top.stdout, 'Options:')).toEqual([...longSpellings(globalFlags()), '--help', '--version'].sort());
    const tabled = new Set(FLAGS.flatMap((f) => (f.commands === 'global' ? [] : f.commands)));
    for (const path of COMMAND_PATHS) {
      const help = await runNavi([...path.split(' '), '--help'], { cwd, env });
      expect(help.code, path).toBe(0);
      const own = section(help.stdout, 'Options:');
      const want = tabled.has(path as CommandPath) ? longSpellings(flagsOf(path as CommandPath)) : [];
      expect(own, `navi ${path} --help`).toEqual(want);
    }
    // No table entry names a command that does not exist.
    for (const path of tabled) expect(COMMAND_PATHS, path).toContain(path);
  }, TIMEOUT_MS);

  it('the shorthand skips the value of every value flag; the fast path knows every run flag', () => {
    for (const flag of FLAGS) {
      for (const spelling of spellings(flag)) {
        const args = flag.kind === 'boolean' ? [spelling, 'loop'] : [spelling, 'VALUE', 'loop'];
        expect(firstPositional(args), spelling).toBe(args.length - 1);
      }
    }
    for (const flag of [...globalFlags(), ...flagsOf('run')]) {
      const value = flag.kind === 'boolean' ? [] : [flag.kind === 'integer' ? '3' : flag.kind === 'choice' ? (flag.choices?.[0] ?? '') : 'v'];
      for (const spelling of spellings(flag)) {
        const parsed = parseRunFast(['run', spelling, ...value, 'go']);
        expect(parsed, spelling).not.toBeNull();
        expect(parsed?.prompt, spelling).toEqual(['go']);
      }
    }
  });
});

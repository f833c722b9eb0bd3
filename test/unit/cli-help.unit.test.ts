/**
 * `--help` of every command, read in the test's process (issue 36): each command's help lists
 * only the global flags it uses and has examples (issue 11, bug 7); the flag table (flags.ts) and
 * the completion script hold exactly the options yargs knows (issue 18 item 8); help is laid out
 * for the host's terminal. The same text the built CLI prints (`main` is what the bin runs);
 * test/scenario/usage-and-help.test.ts keeps the checks that need the process: a pty, the bin.
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES } from '../../src/cli/command-modules/index.js';
import { COMPLETION_TREE, GLOBAL_FLAGS } from '../../src/cli/completion-script.js';
import { FLAGS, flagsOf, globalFlags, spellings, type CommandPath } from '../../src/cli/flags.js';
import { COMMANDS } from '../../src/cli/shorthand.js';
import { parseInProcess } from '../support/in-process.js';

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
  'queue add',
  'queue list',
  'queue cancel',
  'worker',
  'serve',
];

const ENV = { PATH: '/usr/bin:/bin', HOME: os.tmpdir() };

/** `navi <command> --help`: exit 0, the text on stdout and nothing on stderr. */
async function help(command: string, opts: { env?: Record<string, string>; columns?: number } = {}): Promise<string> {
  const args = command === '' ? ['--help'] : [...command.split(' '), '--help'];
  const r = await parseInProcess(args, { env: { ...ENV, ...opts.env }, cwd: os.tmpdir(), ...(opts.columns !== undefined ? { columns: opts.columns } : {}) });
  expect(r.code, `${command} --help: ${r.stderr}`).toBe(0);
  expect(r.stderr).toBe('');
  expect(r.ran, 'help runs no command').toBeUndefined();
  return r.stdout;
}

/** The long flags listed under a help section (`Options:` or `Global options:`). */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
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

describe('--help of each command', () => {
  it('lists only the global flags the command uses', async () => {
    for (const cmd of ['tasks', 'tasks list', 'profiles', 'profiles show', 'init']) {
      const text = await help(cmd);
      for (const flag of ['--ollama-host', '--db', '--model', '--profile', '--version']) expect(text, `${cmd} --help`).not.toContain(flag);
      expect(text).toContain('--cwd');
    }
    for (const cmd of ['runs show', 'sessions list', 'memory list']) {
      const text = await help(cmd);
      expect(text, cmd).toContain('--db');
      expect(text, cmd).not.toContain('--ollama-host');
    }
    const run = await help('run');
    for (const flag of ['--db', '--ollama-host', '--model', '--profile', '--session', '--max-iterations']) expect(run).toContain(flag);
    // The command's own options come before the global ones.
    expect(run.indexOf('--session')).toBeLessThan(run.indexOf('Global options:'));
  });

  it('every command has examples, whole command lines', async () => {
    // completion's examples are `source <(navi completion bash)` lines: they need the shell's own words.
    for (const cmd of COMMAND_PATHS.filter((c) => c !== 'completion')) {
      const text = await help(cmd, { env: { COLUMNS: '80' } });
      const examples = text.slice(text.indexOf('Examples:'));
      expect(text, `${cmd} --help`).toContain('Examples:');
      expect(examples, `${cmd} --help`).toMatch(new RegExp(`^ {2}(\\S+ \\| )?navi ${cmd}\\b`, 'm'));
    }
  });

  it("is wrapped to the host's terminal, else COLUMNS, else 80 columns; 100 at most", async () => {
    // The description column fills the lines, so the widest line is the width the help was laid out for.
    const widest = (text: string): number => Math.max(...text.split('\n').map((l) => [...l].length));
    expect(widest(await help('loop', { columns: 60 }))).toBe(60);
    expect(widest(await help('loop', { columns: 60, env: { COLUMNS: '200' } }))).toBe(60);
    expect(widest(await help('loop', { env: { COLUMNS: '70' } }))).toBe(70);
    expect(widest(await help('loop'))).toBe(80);
    expect(widest(await help('loop', { columns: 300 }))).toBe(100);
  });
});

describe('the flag table', () => {
  it('every option of every command is in the table for it, and the other way round', async () => {
    const top = await help('');
    expect(section(top, 'Options:')).toEqual([...longSpellings(globalFlags()), '--help', '--version'].sort());
    const tabled = new Set(FLAGS.flatMap((f) => (f.commands === 'global' ? [] : f.commands)));
    for (const path of COMMAND_PATHS) {
      const own = section(await help(path), 'Options:');
      const want = tabled.has(path as CommandPath) ? longSpellings(flagsOf(path as CommandPath)) : [];
      expect(own, `navi ${path} --help`).toEqual(want);
    }
    // No table entry names a command that does not exist.
    for (const path of tabled) expect(COMMAND_PATHS, path).toContain(path);
  });

  it('the command modules are the command words the shorthand and the bin know (COMMANDS)', () => {
    expect(COMMAND_MODULES.map((m) => String(m.command).split(' ')[0]).sort()).toEqual([...COMMANDS].sort());
  });
});

describe('navi completion', () => {
  it('every flag offered is one the command accepts (its --help lists it)', async () => {
    const top = await help('');
    for (const flag of GLOBAL_FLAGS) expect(top, flag).toContain(flag.replace(/^--no-/, '--'));
    for (const [command, entry] of Object.entries(COMPLETION_TREE)) {
      const text = await help(command);
      expect(top, `navi ${command} is a command`).toContain(`navi ${command}`);
      for (const flag of entry.flags ?? []) {
        // `--no-x` is how yargs' boolean `--x` is negated; `--print` etc. are listed as themselves.
        const listed = flag.startsWith('--no-') ? `--${flag.slice(5)}` : flag;
        if (['profiles', 'runs', 'sessions', 'queue'].includes(command)) continue; // flags of their subcommands
        expect(text, `navi ${command} --help lists ${flag}`).toContain(listed);
      }
    }
  });
});

/**
 * `navi completion bash|zsh` (issue 11): the script loads in bash and completes commands,
 * subcommands, flags and fixed flag values. `navi completion` itself runs in this process (it
 * prints text; bash and zsh are the processes that matter here). That every flag it offers exists in the command's
 * `--help` (so the static table cannot drift from the command modules) is checked in process:
 * test/unit/cli-help.unit.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanEnv, makeTempDir } from '../support/cli.js';
import { runInProcess } from '../support/in-process.js';

const TIMEOUT_MS = 60_000;

/** zsh is not on every machine (the bash tests always run). */
function hasZsh(): boolean {
  return spawnSync('zsh', ['-f', '-c', 'true']).status === 0;
}

/** What bash completes for the words typed so far (the last one may be partial). */
function complete(script: string, words: string[]): string[] {
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_navi_completion
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['--norc', '-c', program], { encoding: 'utf8' }).split('\n').filter((l) => l !== '');
}

describe('navi completion', () => {
  it('bash: commands, subcommands, flags and flag values', async () => {
    const cwd = makeTempDir('completion');
    const run = await runInProcess(['completion', 'bash'], { cwd, env: cleanEnv() });
    expect(run.code).toBe(0);
    const script = run.stdout;
    expect(script).toContain('complete -o default -F _navi_completion navi');
    expect(complete(script, ['navi', 'ru'])).toEqual(['run', 'runs']);
    expect(complete(script, ['navi', 'sessions', ''])).toEqual(['list', 'show', 'rm', 'compact']);
    expect(complete(script, ['navi', '-p', 'coder', 'sess'])).toEqual(['sessions']);
    expect(complete(script, ['navi', 'run', '--output-s'])).toEqual(['--output-schema']);
    expect(complete(script, ['navi', 'run', '--allowed'])).toEqual(['--allowed-tools']);
    expect(complete(script, ['navi', 'run', '-o', 'st'])).toEqual(['stream-json']);
    expect(complete(script, ['navi', 'loop', '--strategy', ''])).toEqual(['combine', 'radical', 'reread']);
    expect(complete(script, ['navi', 'completion', ''])).toEqual(['bash', 'zsh']);
    // From the flag table (issue 18 items 8, 21): the new flags, and values after a flag before the command.
    expect(complete(script, ['navi', 'run', '--system-p'])).toEqual(['--system-prompt']);
    expect(complete(script, ['navi', 'run', '--no-th'])).toEqual(['--no-think']);
    expect(complete(script, ['navi', 'loop', '--clar'])).toEqual(['--clarify']);
    expect(complete(script, ['navi', '--replay', 'rec.jsonl', 'lo'])).toEqual(['loop']);
  }, TIMEOUT_MS);

  it('zsh: the same function through bashcompinit; the shell comes from $SHELL when not named', async () => {
    const cwd = makeTempDir('completion');
    const zsh = await runInProcess(['completion'], { cwd, env: cleanEnv({ SHELL: '/usr/bin/zsh' }) });
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -o default -F _navi_completion navi');
    const unknown = await runInProcess(['completion'], { cwd, env: cleanEnv({ SHELL: '/bin/fish' }) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/navi completion: name the shell \(bash or zsh\)/);
  }, TIMEOUT_MS);

  it.skipIf(!hasZsh())('zsh: the script loads (compinit, bashcompinit) and the function answers as bashcompinit calls it', async () => {
    const cwd = makeTempDir('completion');
    const run = await runInProcess(['completion', 'zsh'], { cwd, env: cleanEnv() });
    const file = `${cwd}/navi.zsh`;
    writeFileSync(file, run.stdout);
    // bashcompinit's compgen runs the -F function under `emulate -L sh` (0-based arrays); zsh's
    // compadd then keeps the candidates that match what was typed.
    const program = `source ${file}
ask() { emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _navi_completion; echo "\${COMPREPLY[@]}"; }
ask navi sessions ''
ask navi run -o ''
ask navi loop --approval ''`;
    const out = execFileSync('zsh', ['-f', '-c', program], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: cwd } });
    expect(out.split('\n')).toEqual(['list show rm compact', 'text json stream-json', 'none strict periodic', '']);
  }, TIMEOUT_MS);
});

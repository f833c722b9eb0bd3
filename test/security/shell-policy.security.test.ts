/**
 * The shell allow/deny policy through the built CLI (SPEC §10, issue 5 item 3). A
 * `.nav-config.json` denies `touch`; the model tries to run it directly and smuggled inside
 * every shell construct navi claims to see through. Each denied command is a failed tool
 * result plus a `shell_denied` warning, never a prompt, and never runs: it would have created a
 * sentinel file. Deny wins over allow. What the text check cannot see (commands assembled at
 * run time) is pinned in-process at the end: those are the "not a sandbox" limits for the README.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkShellCommand } from '../../src/tools/shell-policy.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import { describeRun, eventsOf, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, scenario, SCENARIO_TIMEOUT_MS, writeFiles } from '../scenario/helpers.js';

/** Smuggling forms; `%S%` is replaced by the sentinel's name. Each would run `touch S` under /bin/sh (dash) or bash. */
const CAUGHT: readonly string[] = [
  'touch %S%',
  '/usr/bin/touch %S%',
  '\\touch %S%',
  "t'ou'ch %S%",
  '"touch" %S%',
  'echo hi; touch %S%',
  'echo hi;touch %S%',
  'echo hi && touch %S%',
  'false || touch %S%',
  'echo hi | touch %S%',
  'echo hi & touch %S%; wait',
  'echo `touch %S%`',
  'echo $(touch %S%)',
  'echo "$(touch %S%)"',
  'echo $(echo $(touch %S%))',
  'echo hi\ntouch %S%',
  'echo hi\r\ntouch %S%',
  "sh -c 'touch %S%'",
  'bash -c "touch %S%"',
  "/bin/sh -c 'touch %S%'",
  "sh -ec 'touch %S%'",
  "bash -lc 'touch %S%'",
  "sh -c \"sh -c 'touch %S%'\"",
  'eval touch %S%',
  "eval 'touch %S%'",
  'FOO=1 touch %S%',
  'env touch %S%',
  'env -i PATH=/usr/bin:/bin touch %S%',
  'nohup touch %S%',
  'command touch %S%',
  'exec touch %S%',
  'timeout 5 touch %S%',
  'nice -n 5 touch %S%',
  '(touch %S%)',
  '{ touch %S%; }',
  'if true; then touch %S%; fi',
  'f() { touch %S%; }; f',
  "bash -c 'cat <(touch %S%)'",
  'cat <<EOF\n$(touch %S%)\nEOF',
  // Was a documented limit until `exec -a NAME` was known to take a value.
  "bash -c 'exec -a x touch %S%'",
];

/**
 * Bypasses found by this suite: a here-string (`<<<`) read as a heredoc hides the lines after
 * it (src/tools/shell-parse.ts); `env -S`/`--split-string`, `env -C DIR` and `stdbuf -o MODE`
 * hide the command behind a wrapper option the policy does not know takes a value
 * (src/tools/shell-policy.ts, skipWrapperArgs).
 */
const BYPASSES: readonly string[] = [
  "bash -c 'cat <<< x\ntouch %S%\nx'",
  "env -S'touch %S%'",
  "env --split-string='touch %S%'",
  'env -C . touch %S%',
  'stdbuf -o 0 touch %S%',
];

const sentinelName = (i: number): string => `SENTINEL_${i}`;
const commandFor = (form: string, i: number): string => form.replaceAll('%S%', sentinelName(i));

forEachBackend((backend) => {
  describe('shell policy', () => {
    /** Runs each form as one shell call of one turn under `deny: [touch, touch *]`; returns the run and what happened. */
    async function tryForms(forms: readonly string[]) {
      const calls: FakeToolCall[] = forms.map((form, i) => ({ name: 'shell', arguments: { command: commandFor(form, i) } }));
      const s = await scenario(backend, {
        turns: [{ tool_calls: [...calls, { name: 'shell', arguments: { command: 'echo allowed > control.txt' } }] }, { content: 'done' }],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ tools: { shell: { deny: ['touch', 'touch *'] } } }) });
      // CI unset: even when navi might think someone could answer, a denied command is never a question.
      const run = await s.navi(['run', '-o', 'stream-json', 'try to touch the sentinels'], { ci: false, timeoutMs: 30_000 });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      // The control command ran: the shell works, only the denied ones were stopped.
      expect(fs.readFileSync(path.join(s.cwd, 'control.txt'), 'utf8')).toBe('allowed\n');
      const ran = forms.filter((_, i) => fs.existsSync(path.join(s.cwd, sentinelName(i))));
      const results = eventsOf(events, 'tool_call').slice(0, forms.length);
      const notDenied = forms.filter((_, i) => results[i]?.ok !== false || !/denied by tools\.shell policy/.test(String(results[i]?.output)));
      return { run, events, ran, notDenied };
    }

    it('deny: touch, smuggled every way navi claims to see; never runs, shell_denied warning each time, no prompt', async () => {
      const { run, events, ran, notDenied } = await tryForms(CAUGHT);
      expect(ran, 'denied commands that ran anyway (the sentinel exists)').toEqual([]);
      expect(notDenied, 'forms not reported as denied').toEqual([]);
      const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'shell_denied');
      expect(warnings).toHaveLength(CAUGHT.length);
      expect(warnings.every((w) => /^shell command denied: /.test(String(w.message)))).toBe(true);
      // Headless: no approval machinery, nothing read from stdin.
      expect(eventsOf(events, 'approval_requested')).toEqual([]);
      expect(run.stderr).not.toMatch(/\[y\/N\]|Choose 1-|allow this command/i);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('deny: the bypasses found by this suite (here-string, env -S / -C, stdbuf -o) never run either', async () => {
      const { ran, notDenied } = await tryForms(BYPASSES);
      expect(ran, 'denied commands that ran anyway (the sentinel exists)').toEqual([]);
      expect(notDenied, 'forms not reported as denied').toEqual([]);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('deny wins over allow; an allow list stops everything else, also behind ; and $(…)', async () => {
      const s = await scenario(backend, {
        turns: [
          {
            tool_calls: [
              { name: 'shell', arguments: { command: 'echo ok > allowed.txt' } },
              { name: 'shell', arguments: { command: 'echo secret > denied.txt' } },
              { name: 'shell', arguments: { command: 'echo hi; touch NOT_ALLOWED_1' } },
              { name: 'shell', arguments: { command: 'echo $(touch NOT_ALLOWED_2)' } },
              { name: 'shell', arguments: { command: 'ls' } },
            ],
          },
          { content: 'done' },
        ],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ tools: { shell: { allow: ['echo *', 'ls', 'ls *'], deny: ['echo *secret*'] } } }) });
      const run = await s.navi(['run', '-o', 'stream-json', 'allow and deny'], { timeoutMs: 20_000 });
      expect(run.code, describeRun(run)).toBe(0);
      const calls = eventsOf(expectValidStream(run), 'tool_call');
      expect(calls.map((c) => c.ok)).toEqual([true, false, false, false, true]);
      expect(String(calls[1]?.output)).toMatch(/matches deny pattern 'echo \*secret\*'/);
      expect(String(calls[2]?.output)).toMatch(/matches no allow pattern/);
      expect(fs.existsSync(path.join(s.cwd, 'allowed.txt'))).toBe(true);
      for (const f of ['denied.txt', 'NOT_ALLOWED_1', 'NOT_ALLOWED_2']) expect(fs.existsSync(path.join(s.cwd, f)), f).toBe(false);
    }, SCENARIO_TIMEOUT_MS);
  });
});

/**
 * Known limits, pinned so the README's threat model stays true: the policy reads the command's
 * text and cannot see commands assembled at run time or run by other interpreters. If one of
 * these starts being denied, move it up into CAUGHT and update the README.
 */
describe('shell policy: what a text check cannot see (documented limits, not a sandbox)', () => {
  const policy = { allow: [], deny: ['touch', 'touch *'] };
  const LIMITS: Array<[string, string]> = [
    ['variable holding the command', 'x=tou; ${x}ch S'],
    ['command from a variable', 'T=touch; $T S'],
    ['command substitution producing the name', '$(echo touch) S'],
    ['backticks producing the name', '`echo touch` S'],
    ['IFS as a separator', 'touch${IFS}S'],
    ['script piped into a shell', "printf 'touch S' | sh"],
    ['script written then run', "echo 'touch S' > s.sh; sh s.sh"],
    ['sourced script', '. ./s.sh'],
    ['xargs', 'echo S | xargs touch'],
    ['find -exec', 'find . -maxdepth 0 -exec touch S ;'],
    ['other interpreters', "python3 -c 'open(\"S\", \"w\")'"],
    ['awk system()', "awk 'BEGIN { system(\"touch S\") }'"],
    ['unlisted wrappers (setsid, ionice, flock, watch…)', 'setsid touch S'],
    ['bash brace expansion', "bash -c '{touch,S}'"],
    ['bash ANSI-C quoting', "bash -c \"\\$'\\\\x74ouch' S\""],
    ['bash coproc', "bash -c 'coproc touch S'"],
    ['bash time -p', "bash -c 'time -p touch S'"],
    ['another program with the same effect', ': > S'],
  ];
  it.each(LIMITS)('%s', (_what, command) => {
    expect(checkShellCommand(command, policy).allowed).toBe(true);
  });
});

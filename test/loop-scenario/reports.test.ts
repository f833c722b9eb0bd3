/**
 * The reports CI systems read, from real loop runs (built CLI, fake Ollama, a git repository
 * with a failing test): `--junit` (validated against junit-10.xsd), `--summary` and the same
 * Markdown appended to `GITHUB_STEP_SUMMARY`, `::error`/`::warning` annotations, and
 * `navi runs show ID --format md|junit|json` rendering the stored run the same way afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import { marked, type Tokens } from 'marked';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runNavi } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { validateJunit } from '../support/junit-xsd.js';
import { tempDir } from '../scenario/helpers.js';
import { expectExit, fixIteration, lookIteration, loopRepo, resultOf, say, scenario, script, tc } from './helpers.js';

/** Per-test hang guard: far above the real time (several CLI runs of seconds each under load). */
const T = 120_000;

forEachBackend((backend) => {
  describe('CI reports', () => {
    it(
      'a completed loop after a blocked exit: JUnit, summary, step summary and a warning; runs show renders the same',
      async () => {
        const early = [tc('shell', { command: 'node --test' }), tc('loop_signal', { type: 'exit', success: true, reason: 'should be fine' }), say('Done.')];
        const s = await scenario(backend, script(early, fixIteration()));
        loopRepo(s.cwd);
        // Outside the repository: a Markdown file there would count as documentation changed.
        const step = path.join(tempDir('step'), 'step-summary.md');
        fs.writeFileSync(step, '# earlier step\n');
        // The report folder does not exist: navi makes it, as JUnit writers do (issue 18, item 16).
        expect(fs.existsSync(path.join(s.cwd, 'out'))).toBe(false);
        const ok = await s.navi(['loop', 'task.yaml', '--junit', 'out/junit.xml', '--summary', 'summary.md'], {
          env: { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: step },
        });
        expectExit(ok, 0);
        expect(ok.stdout).toContain('::warning title=navi loop fix-add%3A exit blocked in iteration 1::BLOCKED: Exit signal but only 0/5 heuristics');
        expect(ok.stdout).not.toContain('::error');

        const junit = fs.readFileSync(path.join(s.cwd, 'out/junit.xml'), 'utf8');
        expect(await validateJunit(junit)).toEqual({ valid: true, errors: [] });
        // A green run has no failures: iteration 1's red test is history (system-out, a property).
        expect(junit).toMatch(/<testsuites name="navi loop run_[^"]+: fix-add" tests="3" failures="0" errors="0"/);
        expect(junit).not.toContain('<failure');
        expect(junit).toMatch(/<system-out>check "tests" failed in iteration 1: exit code 1 \(an earlier iteration; the run's state is iteration 2\)/);
        expect(junit).toContain('<property name="failed_checks" value="tests (exit code 1)"/>');
        expect(junit).toMatch(/<testcase name="exit gate" classname="navi.loop.fix-add" time="[\d.]+">\s*<system-out>EXIT: 2\/5 heuristics \+ explicit signal<\/system-out>/);

        const summary = fs.readFileSync(path.join(s.cwd, 'summary.md'), 'utf8');
        const tokens = marked.lexer(summary, { gfm: true });
        expect((tokens[0] as Tokens.Heading).text).toBe('✅ navi loop: fix-add — completed');
        const tables = tokens.filter((t): t is Tokens.Table => t.type === 'table');
        expect(tables[0]?.rows[0]?.[1]?.text).toBe('0');
        expect(tables[1]?.rows.map((r) => r[2]?.text)).toEqual(['BLOCKED: Exit signal but only 0/5 heuristics', 'EXIT: 2/5 heuristics \\+ explicit signal']);
        expect(summary.match(/<details>/g)).toHaveLength(2);
        // Appended to the step summary, after what earlier steps wrote.
        expect(fs.readFileSync(step, 'utf8')).toBe(`# earlier step\n${summary}\n`);

        // Afterwards, from the database: the same documents.
        const runId = String(/navi loop (run_[^:"]+)/.exec(junit)?.[1]);
        const md = await s.navi(['runs', 'show', runId, '--format', 'md'], { host: false });
        expectExit(md, 0);
        expect(md.stdout).toBe(summary);
        const xml = await s.navi(['runs', 'show', runId, '--format', 'junit'], { host: false });
        expect(xml.stdout).toBe(junit);
        const json = await s.navi(['runs', 'show', runId, '--format', 'json'], { host: false });
        expect((JSON.parse(json.stdout) as { run: { id: string; status: string } }).run).toMatchObject({ id: runId, status: 'completed' });
        const bad = await s.navi(['runs', 'show', runId, '--format', 'html'], { host: false });
        expectExit(bad, 2);
      },
      T,
    );

    it(
      'a loop that stops at max iterations: the gate case fails with its reason, errors are annotated (json mode: on stderr)',
      async () => {
        const s = await scenario(backend, script(lookIteration(), lookIteration('Still looking.')));
        loopRepo(s.cwd, { loop: '{ max_iterations: 2 }' });
        const run = await s.navi(['loop', 'task.yaml', '-o', 'json', '--junit', 'junit.xml', '--summary', 'summary.md'], { env: { GITHUB_ACTIONS: 'true' } });
        expectExit(run, 3);
        expect(resultOf(run)).toMatchObject({ status: 'incomplete', exit_code: 3 });
        expect(run.lines).toHaveLength(1);
        expect(run.stderr).toMatch(/^::error title=navi loop fix-add%3A check tests failing::exit code 1 in iteration 2/m);
        expect(run.stderr).toMatch(/^::error title=navi loop fix-add%3A incomplete::incomplete \(max_iterations\): the exit gate said: CONTINUE: 0\/5 heuristics, no exit signal \(exit code 3; run run_/m);
        const junit = fs.readFileSync(path.join(s.cwd, 'junit.xml'), 'utf8');
        expect(await validateJunit(junit)).toEqual({ valid: true, errors: [] });
        expect(junit).toMatch(/<failure message="incomplete \(max_iterations\): the exit gate said: CONTINUE: 0\/5 heuristics, no exit signal" type="incomplete">/);
        expect(fs.readFileSync(path.join(s.cwd, 'summary.md'), 'utf8')).toMatch(/^## ⚠️ navi loop: fix-add — incomplete\n/);
      },
      T,
    );
  });
});

forEachBackend((backend) => {
  describe('CI reports of a replay that mismatched', () => {
    it(
      'JUnit, summary and annotation carry the mismatch and its diff, not only "no iteration was committed"',
      async () => {
        const s = await scenario(backend, script(fixIteration()));
        loopRepo(s.cwd);
        const rec = path.join(tempDir('rec'), 'loop.jsonl');
        expectExit(await s.navi(['loop', 'task.yaml', '--record', rec]), 0);
        // The task changed since the recording: the first model call differs.
        const task = path.join(s.cwd, 'task.yaml');
        fs.writeFileSync(task, fs.readFileSync(task, 'utf8').replace('Make the failing', 'Please make the failing'));
        const run = await s.navi(['loop', 'task.yaml', '--replay', rec, '--junit', 'reports/junit.xml', '--summary', 'reports/summary.md'], {
          env: { GITHUB_ACTIONS: 'true' },
          host: false,
        });
        expectExit(run, 2);
        const diff = /recorded: …"[^\n]*Make the failing[^\n]*\n\s*now: +…"[^\n]*Please make the failing/;
        const junit = fs.readFileSync(path.join(s.cwd, 'reports/junit.xml'), 'utf8');
        expect(await validateJunit(junit)).toEqual({ valid: true, errors: [] });
        expect(junit).not.toContain('no iteration was committed');
        const body = /<failure [^>]*>([^<]*)<\/failure>/.exec(junit)?.[1] ?? '';
        expect(body.replace(/&quot;/g, '"')).toMatch(diff);
        const summary = fs.readFileSync(path.join(s.cwd, 'reports/summary.md'), 'utf8');
        expect(summary).not.toContain('no iteration was committed');
        expect(summary).toMatch(diff);
        expect(run.stdout).toMatch(/^::error title=navi loop fix-add%3A failed::failed \(replay_mismatch\): --replay .*differs.*%0A.*recorded: .*Make the failing.*%0A.*now: .*Please make the failing/m);
      },
      T,
    );
  });
});

describe('CI reports of a run that never started', () => {
  it(
    'an invalid task file: exit 2, and the JUnit report says why nothing ran',
    async () => {
      const cwd = tempDir('bad-task');
      fs.writeFileSync(path.join(cwd, 'task.yaml'), 'prompt: Fix it.\ncolour: red\n');
      const run = await runNavi(['loop', 'task.yaml', '--junit', 'junit.xml'], { cwd, env: cleanEnv({ NAVI_DATA_DIR: path.join(cwd, 'data'), OLLAMA_HOST: 'http://127.0.0.1:9' }) });
      expectExit(run, 2);
      const junit = fs.readFileSync(path.join(cwd, 'junit.xml'), 'utf8');
      expect(await validateJunit(junit)).toEqual({ valid: true, errors: [] });
      expect(junit).toMatch(/<failure message="failed \([^"]*colour: unknown key[^"]*\): no iteration was committed" type="failed">/);
      expect(junit).toMatch(/<property name="exit_code" value="2"\/>/);
      expect(fs.existsSync(path.join(cwd, 'data'))).toBe(false);
    },
    T,
  );
});

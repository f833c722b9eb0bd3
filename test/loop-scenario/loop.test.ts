/**
 * `navi loop` as users and scripts run it (SPEC §7): scripted models in real git repositories
 * whose task check is a real `node --test`. Exit codes, stream-json events, text-mode blocks,
 * markers and database rows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import {
  eventsOf,
  expectExit,
  expectLoopStream,
  fixIteration,
  git,
  iterationMessages,
  lookIteration,
  loopRepo,
  markerFiles,
  resultOf,
  say,
  scenario,
  script,
  tc,
  FIXED,
} from './helpers.js';

/** Per-test hang guard: far above the real time (CLI runs of seconds each under load). */
const T = 120_000;

forEachBackend((backend) => {
  describe('navi loop', () => {
    it(
      'a model that fixes the failing test and commits: exit 0, completion marker, status blocks and hashes in events and rows',
      async () => {
        const s = await scenario(backend, script(fixIteration()));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
        expectExit(run, 0);
        const events = expectLoopStream(run);
        const types = events.map((e) => e.type);
        expect(types[0]).toBe('loop_started');
        expect(types.slice(-3)).toEqual(['exit_gate', 'loop_complete', 'result']);
        const status = eventsOf(events, 'iteration_status')[0]!;
        expect(status).toMatchObject({ iteration: 1, phase: 'VERIFY', heuristics_met: 2, heuristics_total: 5, exit_signal: true, progress: 85 });
        expect(status.indicators).toEqual({ code_committed: true, tests_passing: true, code_simplified: false, docs_updated: false, ticket_closed: 'skipped', marker_created: false });
        expect(String(status.block)).toContain('  [ ] Ticket closed (skipped - no ticket)');
        expect(status.state_hash).toMatch(/^[0-9a-f]{6}$/);
        const result = resultOf(run);
        // The ending wrote its marker: the JSON says so, as the LOOP COMPLETE block does (issue 18, item 15).
        const ending = { ...(status.indicators as Record<string, unknown>), marker_created: true };
        expect(result).toMatchObject({ status: 'success', reason: 'gate_passed', exit_code: 0, iterations: 1, state_hash: status.state_hash, indicators: ending });
        const complete = eventsOf(events, 'loop_complete')[0]!;
        expect(complete.indicators).toEqual(ending);
        expect(String(complete.block)).toMatch(/\[x\] Marker created/);
        expect(git(s.cwd, 'log', '--oneline')).toContain('Fix add()');
        const markers = markerFiles(s.cwd);
        expect(markers).toEqual([expect.stringMatching(/^\d{4}-\d\d-\d\d-\d{4}_fix-add\.md$/)]);
        const marker = fs.readFileSync(path.join(s.cwd, '.agent', '.context-markers', markers[0]!), 'utf8');
        expect(marker).toContain('- Iteration: 1/5');
        expect(marker).toContain(`- State hash: ${String(status.state_hash)}`);
        expect(marker).toContain('- [x] Tests passing');

        const runId = String(result.run_id);
        const { row, rows } = await s.db.withStore(async (store) => ({ row: await store.loopRuns.get(runId), rows: await store.loopRuns.listIterations(runId) }));
        expect(row).toMatchObject({ status: 'completed', reason: 'gate_passed', iteration: 1, taskName: 'fix-add', hashHistory: [status.state_hash] });
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ stateHash: status.state_hash, gateDecision: 'exit', statusBlock: status.block, phase: 'VERIFY' });
        expect(rows[0]!.evidence).toMatchObject({ checks: [{ name: 'tests', exit_code: 0 }], commits_since_start: 1, test_runs: [{ command: 'node --test', exit_code: 1 }, { command: "node --test && git commit -qam 'Fix add()'", exit_code: 0 }] });
      },
      T,
    );
  });
});

forEachBackend(
  (backend) => {
    describe('navi loop behaviours', () => {
      it(
        'text mode: banner, status block, LOOP COMPLETE with the exit line; nothing but text on stdout',
        async () => {
          const s = await scenario(backend, script(fixIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml']);
          expectExit(run, 0);
          const out = run.stdout;
          expect(out).toMatch(/^━{52}\nLOOP MODE ACTIVATED\n━{52}\n\nTask: Make the failing test pass by fixing math\.js\.\nMax iterations: 5\n/);
          expect(out).toContain('NAVIGATOR_STATUS');
          expect(out).toContain('Fixed add()');
          expect(out).toContain('{"v":2,"type":"exit","success":true,"reason":"add() fixed; node --test passes; committed"}\n━');
          expect(out).toContain('LOOP COMPLETE');
          expect(out.indexOf('NAVIGATOR_STATUS')).toBeLessThan(out.indexOf('LOOP COMPLETE'));
        },
        T,
      );

      it(
        'a model that claims done without doing anything is not believed; max iterations then exits 3 with a partial marker',
        async () => {
          const claim = [say('Everything is done.\nnav-signal:v3:{"type":"exit","success":true,"reason":"done"}')];
          const s = await scenario(backend, script(claim, claim));
          loopRepo(s.cwd, { loop: '{ max_iterations: 2 }' });
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expectExit(run, 3);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'exit_gate').map((g) => [g.decision, (g.signal as { accepted: boolean }).accepted])).toEqual([
            ['continue', false],
            ['continue', false],
          ]);
          expect(iterationMessages(s.chats())[1]).toContain('Your exit signal was not accepted: the exit signal came from an iteration with no tool calls');
          expect(resultOf(run)).toMatchObject({ status: 'incomplete', reason: 'max_iterations', exit_code: 3 });
          expect(markerFiles(s.cwd)).toEqual([expect.stringMatching(/_fix-add_loop-partial\.md$/)]);
        },
        T,
      );

      it(
        'a signal with too few indicators is BLOCKED and the reason is fed back to the next iteration',
        async () => {
          const early = [tc('shell', { command: 'node --test' }), tc('loop_signal', { type: 'exit', success: true, reason: 'should be fine' }), say('Done.')];
          const s = await scenario(backend, script(early, fixIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expectExit(run, 0);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'exit_gate')[0]).toMatchObject({ decision: 'blocked', reason: 'BLOCKED: Exit signal but only 0/5 heuristics' });
          expect(iterationMessages(s.chats())[1]).toMatch(/Your exit signal was not accepted: only 0\/5 completion indicators are met[\s\S]*Not met yet: code changes committed, tests passing/);
          expect(resultOf(run)).toMatchObject({ iterations: 2 });
        },
        T,
      );

      it(
        'the same state repeated: headless → exit 4 (stagnation) with a loop-aborted marker',
        async () => {
          const s = await scenario(backend, script(lookIteration(), lookIteration(), lookIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '-o', 'json']);
          expectExit(run, 4);
          expect(run.lines).toHaveLength(1);
          const result = JSON.parse(run.stdout) as Record<string, unknown>;
          expect(result).toMatchObject({ type: 'result', status: 'aborted', reason: 'stagnation', exit_code: 4, iterations: 3 });
          expect(run.stderr).toMatch(/same state for 3 iterations/);
          expect(markerFiles(s.cwd)).toEqual([expect.stringMatching(/_loop-aborted\.md$/)]);
        },
        T,
      );

      it(
        'the same state with never_pause: diversify twice, then the third stagnation aborts (exit 4)',
        async () => {
          const s = await scenario(backend, script(...Array.from({ length: 6 }, () => lookIteration())));
          loopRepo(s.cwd, { loop: '{ max_iterations: 8, stagnation_threshold: 2, never_pause_on_stagnation: true, stagnation_diversify_strategy: reread }' });
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expectExit(run, 4);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'diversified').map((d) => [d.attempt, d.strategy, d.iteration])).toEqual([
            [1, 'reread', 2],
            [2, 'reread', 4],
          ]);
          expect(eventsOf(events, 'stagnation_detected').map((d) => d.action)).toEqual(['diversify', 'diversify', 'abort']);
          expect(iterationMessages(s.chats())[2]).toContain('STAGNATION — change of approach required (strategy: reread, recovery 1 of 2)');
          expect(resultOf(run)).toMatchObject({ status: 'aborted', reason: 'stagnation', iterations: 6 });
          expect(markerFiles(s.cwd)).toEqual([expect.stringMatching(/_loop-aborted\.md$/)]);
        },
        T,
      );

      it(
        'a model that oscillates between two states is stopped as oscillation (exit 4)',
        async () => {
          // Two wrong fixes in turn: each fails the test differently (got 1, got 6), so the states alternate.
          const flip = (expr: string) => [tc('write_file', { path: 'math.js', content: `export function add(a, b) {\n  return ${expr};\n}\n` }), say('Changed math.js.')];
          const s = await scenario(backend, script(flip('b - a'), flip('a * b'), flip('b - a'), flip('a * b')));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expectExit(run, 4);
          const events = expectLoopStream(run);
          const hashes = eventsOf(events, 'iteration_status').map((e) => e.state_hash);
          expect(hashes[0]).toBe(hashes[2]);
          expect(hashes[1]).toBe(hashes[3]);
          expect(eventsOf(events, 'stagnation_detected')[0]).toMatchObject({ reason: 'oscillation', period: 2 });
          expect(resultOf(run)).toMatchObject({ status: 'aborted', reason: 'oscillation' });
        },
        T,
      );

      it(
        'a model that asks a question is told (headless) to pick the safest option and proceed',
        async () => {
          const ask = [tc('read_file', { path: 'math.js' }), say('Should I fix math.js or change the test?')];
          const s = await scenario(backend, script(ask, fixIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '-o', 'json']);
          expectExit(run, 0);
          expect(iterationMessages(s.chats())[1]).toMatch(/Your previous turn ended with a question, but nobody can answer it[\s\S]*Choose the safest reasonable option yourself/);
        },
        T,
      );

      it(
        'malformed signals never exit the loop (prose on the line, bad JSON, wrong type, bad tool arguments)',
        async () => {
          const work = (text: string) => [tc('write_file', { path: 'math.js', content: FIXED }), tc('shell', { command: 'git commit -qam fix || true' }), say(text)];
          const s = await scenario(
            backend,
            script(
              work('Done! nav-signal:v3:{"type":"exit","success":true,"reason":"x"}'),
              work('nav-signal:v3:{"type":"exit","success":true,"reason":"x"'),
              work('```pilot-signal\n{"type":"finished","success":true}\n```'),
              [tc('loop_signal', { type: 'exit', success: 'yes', reason: 'x' }), say('ok')],
            ),
          );
          loopRepo(s.cwd, { loop: '{ max_iterations: 4, stagnation_threshold: 5 }' });
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
          expectExit(run, 3);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'exit_gate').map((g) => g.exit_signal)).toEqual([false, false, false, false]);
          expect(eventsOf(events, 'exit_gate').map((g) => g.decision)).toEqual(['continue', 'continue', 'continue', 'continue']);
          expect(eventsOf(events, 'tool_call').find((c) => c.name === 'loop_signal')).toMatchObject({ ok: false });
        },
        T,
      );

      it(
        '--decisions FILE drives strict approval: continue, then abort → exit 4 user_aborted, partial marker',
        async () => {
          const s = await scenario(backend, script(lookIteration('one'), lookIteration('two')));
          loopRepo(s.cwd);
          fs.writeFileSync(path.join(s.cwd, 'decisions.jsonl'), '{"decision":"continue"}\n{"decision":"abort"}\n');
          const run = await s.navi(['loop', 'task.yaml', '--approval', 'strict', '--decisions', 'decisions.jsonl', '-o', 'stream-json']);
          expectExit(run, 4);
          const events = expectLoopStream(run);
          expect(eventsOf(events, 'approval_requested').map((e) => e.prompt)).toEqual(['approval', 'approval']);
          expect(eventsOf(events, 'approval_decision').map((e) => [e.decision, e.source, e.line])).toEqual([
            ['continue', 'decisions_file', 1],
            ['abort', 'decisions_file', 2],
          ]);
          expect(resultOf(run)).toMatchObject({ status: 'aborted', reason: 'user_aborted', iterations: 2 });
          expect(markerFiles(s.cwd)).toEqual([expect.stringMatching(/_loop-partial\.md$/)]);
        },
        T,
      );

      it(
        '--decisions - reads the answers from stdin; a bad line is exit 2 naming it',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '--approval', 'strict', '--decisions', '-'], { stdin: '{"decision":"maybe"}\n' });
          expectExit(run, 2);
          expect(run.stderr).toMatch(/navi: stdin:1: "decision" must be one of continue, adjust, abort, extend, complete/);
          fs.writeFileSync(path.join(s.cwd, 'bad.jsonl'), '{"decision":"continue"}\nnot json\n');
          const bad = await s.navi(['loop', 'task.yaml', '--approval', 'strict', '--decisions', 'bad.jsonl']);
          expectExit(bad, 2);
          expect(bad.stderr).toMatch(/navi: bad\.jsonl:2: not a JSON object/);
        },
        T,
      );

      it(
        'strict approval with neither a terminal nor --decisions is refused at start (exit 2), before any model call',
        async () => {
          const s = await scenario(backend, script(lookIteration()));
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '--approval', 'strict']);
          expectExit(run, 2);
          expect(run.stderr).toMatch(/iteration_approval is "strict" but nobody can answer[\s\S]*--decisions/);
          expect(s.chats()).toHaveLength(0);
          expect(fs.existsSync(s.db.dataDir) && s.db.kind === 'pglite').toBe(true);
          const { runs } = await s.db.withStore(async (store) => ({ runs: await store.loopRuns.list() }));
          expect(runs).toEqual([]);
        },
        T,
      );

      it(
        'never_pause without an explicit max_iterations is a config error (exit 2), from the flag or the task',
        async () => {
          const s = await scenario(backend, script());
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'task.yaml', '--never-pause']);
          expectExit(run, 2);
          expect(run.stderr).toMatch(/never_pause_on_stagnation is true but max_iterations is not set explicitly/);
          const ok = await s.navi(['loop', 'task.yaml', '--never-pause', '--max-iterations', '1', '-o', 'json'], {});
          expect(ok.code).not.toBe(2);
        },
        T,
      );

      it(
        '"just do this once" runs one-shot (no loop events, no run row)',
        async () => {
          const s = await scenario(backend, { turns: [tc('read_file', { path: 'math.js' }), say('It subtracts.')] });
          loopRepo(s.cwd);
          const run = await s.navi(['loop', 'Just do this once: read math.js and tell me what add does', '-o', 'stream-json']);
          expectExit(run, 0);
          const types = run.events.map((e) => e.type);
          expect(types).not.toContain('loop_started');
          expect(resultOf(run).run_id).toBeUndefined();
          expect(run.stderr).toContain('running one-shot (the prompt says "just do this once")');
        },
        T,
      );
    });
  },
  { only: 'pglite' },
);

/**
 * An overnight loop survives Ollama restarting under it (issue 17 point 11): the fake drops the
 * reply mid-way, refuses connections while it "restarts", then answers again; the loop waits it
 * out (llm.outage_retry, 5m by default in loop mode; the model step calls `callModelPatiently`)
 * and completes with exit 0. A one-shot run keeps exit 75 at once.
 */
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import { expectFailure } from '../scenario/helpers.js';
import { eventsOf, expectExit, expectLoopStream, fixIteration, loopRepo, resultOf, scenario, script } from './helpers.js';

const T = 120_000;

/** Ollama goes away while the model answers: reply cut, then refused for 1.5 s. */
const RESTART: FakeTurn = { thinking: 'Let me look at math.js first, then', chunk_size: 6, drop_after_chunks: 2, restart_ms: 1500 };

forEachBackend(
  (backend) => {
    describe('Ollama restarts mid-loop', () => {
      it('the loop waits it out (warnings, heartbeats) and completes: exit 0', async () => {
        const [first, ...rest] = fixIteration();
        const s = await scenario(backend, script([first as FakeTurn, RESTART, ...rest]));
        loopRepo(s.cwd);
        const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { env: { NAVI_HEARTBEAT_MS: '200' } });
        expectExit(run, 0);
        const events = expectLoopStream(run);
        const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'ollama_outage');
        expect(warnings.length).toBeGreaterThanOrEqual(1);
        expect(String(warnings[0]?.message)).toMatch(/asking again in 1 s/);
        expect(resultOf(run)).toMatchObject({ status: 'success', reason: 'gate_passed', exit_code: 0 });
      }, T);

      it('a one-shot run ends with exit 75 at once (llm.outage_retry unset)', async () => {
        const s = await scenario(backend, { turns: [RESTART, { content: 'never' }], on_exhausted: 'error' });
        const run = await s.navi(['run', '-o', 'json', 'hello']);
        expectFailure(run, 75, /ended the response for model qwen3:8b before it was complete/);
        expect(s.chats()).toHaveLength(1);
      }, T);
    });
  },
  { only: 'pglite' },
);

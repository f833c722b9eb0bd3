/**
 * `navi sessions compact ID`: forced compression of a stored session (seed 000 compact_stream).
 * The model summarises everything but the most recent messages; the display buffer is untouched.
 * Nothing to compress → exit 1 with a clear message.
 */
import { EXIT } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import { createRuntime, reportFailure, resolveProfile, turnBase, type Runtime } from '../runtime.js';
import { createOutput } from '../setup.js';
import { installStopHandlers } from '../os-signals.js';
import { NotFoundError } from '../../errors.js';

export async function sessionsCompact(argv: GlobalArgs & Record<string, unknown>): Promise<number> {
  const started = Date.now();
  const sessionId = String(argv.id);
  const output = createOutput(argv);
  const stop = installStopHandlers();
  let rt: Runtime | null = null;
  try {
    rt = await createRuntime(argv, output, { mcp: false });
    const session = await (await rt.store).sessions.get(sessionId);
    if (!session) throw new NotFoundError('session_not_found', `no session '${sessionId}'; see: navi sessions list`);
    const profileId = argv.profile ?? session.profile;
    resolveProfile(rt, profileId);
    output.setSession(sessionId);
    let summary = 'compacted';
    for await (const ev of rt.agent.compactStream({ ...turnBase(rt, stop.signal), sessionId, newSession: false, message: '', profileId })) {
      output.event(ev);
      if (ev.type === 'context_compressed') {
        summary = `compacted session ${sessionId}: ${ev.messages_before} → ${ev.messages_after} messages in the model's view (~${ev.estimated_tokens_after} tokens); the full history is kept`;
      }
    }
    if (!stop.signal.aborted) rt.exchanges.finish();
    if (output.mode === 'text') process.stdout.write(`${summary}\n`);
    await output.result({
      status: 'success',
      reason: 'compacted',
      exit_code: EXIT.success,
      result: summary,
      num_turns: 1,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      duration_ms: Date.now() - started,
      errors: [],
    });
    return stop.finish(EXIT.success);
  } catch (err) {
    return stop.finish(await reportFailure(output, err, { interrupted: stop.signal.aborted, started, sessionId }));
  } finally {
    output.close();
    // Everything is saved before the result is written; a signal while closing exits at once.
    if (rt) await rt.store.then((s) => s.close(), () => undefined);
  }
}

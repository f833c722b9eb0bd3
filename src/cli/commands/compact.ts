/**
 * `navi sessions compact ID`: forced compression of a stored session (seed 000 compact_stream).
 * The model summarises everything but the most recent messages; the display buffer is untouched.
 * Nothing to compress → exit 1 with a clear message.
 */
import { EXIT, NotFoundError } from '../../errors.js';
import { withAgentCommand } from '../command-lifecycle.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { createRuntime, resolveProfile, turnBase } from '../runtime.js';

export async function sessionsCompact(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  const sessionId = String(argv.id);
  return withAgentCommand<never>(argv, host, {}, async ({ output, stop, started, ids, onClose, settle }) => {
    ids.sessionId = sessionId;
    const rt = await createRuntime(argv, host, output, { mcp: false });
    onClose(() => rt.store.then((s) => s.close()));
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
    settle(rt.exchanges);
    if (output.mode === 'text') host.stdout.write(`${summary}\n`);
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
    return EXIT.success;
  });
}

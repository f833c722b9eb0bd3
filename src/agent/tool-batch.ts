/**
 * The tool step of a turn: runs the calls of one assistant message in order, each result
 * appended to the context and stored as it comes, with `tool_started` / `tool_call` events and
 * heartbeats while a tool is silent. A stop lets the running tool end and marks the rest not run.
 * The last result is returned instead: the driver adds it once the next call's reminders are
 * known, so a note rides in it from its first send on (mechanics.ts says why).
 */
import type { ChatMessage } from '../llm/types.js';
import type { ToolResult } from '../tools/types.js';
import { isAbortError } from '../errors.js';
import type { AgentEvent } from './events.js';
import { capArgsForEvent, capForEvent } from './event-caps.js';
import { callId } from './model-call.js';
import type { TurnState } from './turn-state.js';
import { waitWithHeartbeat } from './wait-with-heartbeat.js';

export async function* runToolBatch(state: TurnState, assistant: ChatMessage, iteration: number): AsyncGenerator<AgentEvent, ChatMessage | null> {
  const { tools } = state.deps;
  const calls = assistant.tool_calls ?? [];
  let last: ChatMessage | null = null;
  for (const [index, call] of calls.entries()) {
    const id = callId(iteration, index, call);
    const shownArgs = capArgsForEvent(call.arguments);
    yield { type: 'tool_started', call_id: id, name: call.name, arguments: shownArgs, iteration };
    const started = state.now();
    let result: ToolResult;
    if (state.signal.aborted) {
      result = { ok: false, output: 'not run: navi was interrupted' };
    } else {
      try {
        result = yield* waitWithHeartbeat(tools.execute(call.name, call.arguments, state.toolCtx, state.allowed), {
          channel: state.channel,
          intervalMs: state.heartbeatMs,
          waitingFor: 'tool',
          now: state.now,
        });
      } catch (err) {
        if (!isAbortError(err)) throw err;
        result = { ok: false, output: 'interrupted: navi was stopped while this tool ran' };
      }
    }
    // Paired with its call by id (Cohere and native templates number results by it): the id
    // the assistant message carries, the model's or, when it gave none, navi's
    // `call_<iteration>_<n>` (assistantMessage), so a call and its result always match and a
    // continued session replays both as stored.
    const toolMessage: ChatMessage = { role: 'tool', content: result.output, tool_name: call.name, tool_call_id: id };
    if (index === calls.length - 1) last = toolMessage;
    else {
      state.addToContext(toolMessage);
      state.persist(toolMessage);
    }
    yield {
      type: 'tool_call',
      call_id: id,
      name: call.name,
      arguments: shownArgs,
      ok: result.ok,
      duration_ms: Math.max(0, state.now() - started),
      ...capForEvent(result.output),
      iteration,
    };
  }
  return last;
}

/**
 * The host the agent-level tools call while a turn runs them (`ToolContext.host`): plan,
 * spawn_agent, switch_profile, remember, forget. The work that needs the whole agent is a
 * service the `Agent` provides (`TurnServices`); services read the `TurnState` and return their
 * changes, and the host applies them (usage, planning log, the plan to show, the profile switch).
 */
import type { ChatMessage, ChatUsage } from '../llm/types.js';
import type { SpawnArgs, ToolResult, TurnHost } from '../tools/types.js';
import type { AgentEvent } from './events.js';
import { refreshMemory } from './memory.js';
import type { PlanChange } from './planning/plan-for-turn.js';
import { capTools, droppedToolsNote } from './tool-ceiling.js';
import type { CompressionChange, TurnState } from './turn-state.js';

/** What the Agent provides to a turn: the work that needs the whole agent. */
export interface TurnServices {
  spawn(turn: TurnState, args: SpawnArgs): Promise<ToolResult>;
  plan(turn: TurnState, args: { reason?: string; updated_goal?: string }): Promise<PlanChange>;
  /** Compression when due (or always, for `manual`): yields its start, returns the change to apply. */
  maybeCompress(turn: TurnState, reason: 'preturn' | 'midturn' | 'postturn'): AsyncGenerator<AgentEvent, CompressionChange | null>;
  /** Post-turn workers besides compression (memory extraction): the usage of their calls. */
  afterTurn(turn: TurnState): Promise<ChatUsage | null>;
  /** The context as sent: oversized single messages truncated for the view only. */
  view(turn: TurnState): readonly ChatMessage[];
}

export class TurnToolHost implements TurnHost {
  constructor(
    private readonly state: TurnState,
    private readonly services: TurnServices,
  ) {}

  async plan(args: { reason?: string; updated_goal?: string }): Promise<ToolResult> {
    const { state } = this;
    // The planner writes the todo list of this session.
    await state.writesLanded();
    const change = await this.services.plan(state, args);
    state.recordServiceCalls(change.calls, change.usage);
    const { log } = change;
    if (log !== null) state.writer.enqueue((s) => s.planningLogs.append(state.sessionId, log));
    // The display buffer shows it (`is_plan`) after the tool batch.
    if (change.plan !== null) state.pendingPlan = change.plan;
    return change.result;
  }

  async spawnAgent(args: SpawnArgs): Promise<ToolResult> {
    // The sub-agent's session refers to this one (parent_id).
    await this.state.writesLanded();
    return this.services.spawn(this.state, args);
  }

  switchProfile(profileId: string): Promise<ToolResult> {
    const { state } = this;
    const target = state.deps.profiles.profiles.get(profileId);
    if (!target) {
      const ids = [...state.deps.profiles.profiles.keys()].join(', ');
      return Promise.resolve({ ok: false, output: `unknown profile '${profileId}'; available: ${ids}` });
    }
    state.pendingProfile = profileId;
    const { dropped } = capTools(state.profileTools(target), state.toolCeiling);
    const note = droppedToolsNote(dropped);
    if (note) state.emit({ type: 'warning', code: 'tools_dropped', message: `switch_profile: profile '${profileId}' gets no ${dropped.join(', ')} (not in the current agent's tools)` });
    return Promise.resolve({ ok: true, output: `Switched to profile '${profileId}' from the next step on${note ? `, ${note}` : ''}.` });
  }

  /** Reloads profile and tools after the batch that held switch_profile; a model change is reported. */
  applyProfileSwitch(): AgentEvent | null {
    const { state } = this;
    const next = state.deps.profiles.profiles.get(state.pendingProfile ?? '');
    state.pendingProfile = null;
    if (!next) return null;
    const previousModel = state.model;
    state.adoptProfile(next, capTools(state.profileTools(next), state.toolCeiling).kept);
    return state.model !== previousModel ? { type: 'model_info', model: state.model, num_ctx: state.numCtx } : null;
  }

  async remember(fact: string): Promise<ToolResult> {
    const { deps, toolCtx } = this.state;
    // The memory refers to the session, whose creation may still be on its way (issue 18 item 5).
    await this.state.writesLanded();
    const store = await deps.store;
    const record = await store.memories.add(deps.user ?? 'local', fact.trim(), 'tool', toolCtx.sessionId);
    await refreshMemory(deps.store, deps.user ?? 'local', deps.memoryCache);
    return { ok: true, output: `Remembered (${record.id}): ${record.fact}` };
  }

  async forget(id: string): Promise<ToolResult> {
    const { deps } = this.state;
    const store = await deps.store;
    const removed = await store.memories.remove(deps.user ?? 'local', id.trim());
    if (removed) await refreshMemory(deps.store, deps.user ?? 'local', deps.memoryCache);
    return removed ? { ok: true, output: `Forgot ${id}.` } : { ok: false, output: `no memory with id '${id}'` };
  }
}

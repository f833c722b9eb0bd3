/**
 * The agent core (SPEC §8): `runStream` runs one turn as an async generator of typed events,
 * `run` returns only the final text, `runEphemeral` runs a sub-agent and returns
 * `[text, completedNormally]`. The CLI renders the events; outcomes (completed, max
 * iterations, interrupted, context too large) arrive in `stream_end` and the generator's
 * return value. Failures the user must act on (Ollama unavailable, storage) are thrown as
 * NaviErrors after everything already produced has been saved.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage } from '../llm/types.js';
import { NotFoundError } from '../errors.js';
import { composeSystemPrompt } from '../profiles/load.js';
import type { Profile } from '../profiles/types.js';
import type { SpawnArgs, ToolResult } from '../tools/types.js';
import { splitTurnOptions, type AgentDeps, type RunSettings, type SubagentTurn, type TurnOptions, type TurnOutcome } from './agent-types.js';
import { ContextBuilder } from './context-builder.js';
import type { AgentEvent } from './events.js';
import { Turn } from './turn.js';
import type { TurnServices } from './turn-host.js';
import { toolsForProfile, TurnState } from './turn-state.js';
import { compressTurn } from './compression/compress-turn.js';
import { compressionSettings, NothingToCompactError, truncateForView, viewBudget, wouldCompress } from './compression/index.js';
import { extractMemories } from './memory-extraction.js';
import { planForTurn } from './planning/plan-for-turn.js';
import { capTools, droppedToolsNote, type CappedTools } from './tool-ceiling.js';

export type { AgentDeps, RunSettings, TurnInput, TurnOptions, TurnOutcome } from './agent-types.js';
export { effectiveNumCtx, toolsForProfile } from './turn-state.js';

/** Tools that agent-level features provide; a profile may list them even when not registered. */
const RESERVED_TOOLS = new Set(['loop_signal']);
/** Sub-agents may nest (when a profile allows spawn_agent) but not without bound. */
export const MAX_SUBAGENT_DEPTH = 3;
/** Sub-agent defaults (seed 000 run_ephemeral). */
export const SUBAGENT_MAX_ITERATIONS = 40;
export const SUBAGENT_TIMEOUT_S = 300;
/**
 * The most a model may ask for one sub-agent (`timeout_seconds`, `max_iterations`): enough for
 * real work, never "forever". (Uncapped, a timeout past ~24.8 days overflowed Node's timer and
 * fired at once, and past ~49.7 days `AbortSignal.timeout` threw.)
 */
export const SUBAGENT_TIMEOUT_CAP_S = 3600;
export const SUBAGENT_ITERATION_CAP = 200;

/** Unknown tool names in a profile (excluding tools that later features provide). */
export function unknownProfileTools(profile: Profile, has: (name: string) => boolean): string[] {
  const all = [...profile.settings.tools.agent, ...profile.settings.tools.subagent];
  return [...new Set(all.filter((n) => !has(n) && !RESERVED_TOOLS.has(n)))];
}

export interface EphemeralOptions {
  maxIterations?: number;
  excludeTools?: string[];
  briefing?: string;
  customSystemPrompt?: string;
  /** The parent's system prompt, used when set (inherit_system_prompt). */
  inheritSystemPrompt?: string;
  contextTransfer?: string;
  parentSessionId: string;
  timeoutSeconds?: number;
  /** Receives the sub-agent's events (the parent forwards them live). */
  onEvent?: (ev: AgentEvent) => void;
  signal: AbortSignal;
  /** Run settings inherited from the parent (model, cwd, shell policy…). */
  base: RunSettings;
  parentAgentPath: string[];
  depth: number;
  /** The starting agent's tools: the sub-agent gets at most these (none given: its profile's). */
  toolCeiling?: readonly string[];
}

export interface EphemeralOutcome extends TurnOutcome {
  timedOut: boolean;
  sessionId: string;
  /** Tools of the sub-agent's profile it did not get (not under the ceiling). */
  droppedTools: string[];
}

export class Agent {
  private readonly builder: ContextBuilder;

  constructor(
    private readonly deps: AgentDeps,
    private readonly services: Omit<TurnServices, 'spawn'> = agentServices(deps),
  ) {
    this.builder = new ContextBuilder(deps.profiles);
  }

  /** Runs one turn and returns only the final text. */
  async run(opts: TurnOptions): Promise<string> {
    const gen = this.runStream(opts);
    for (;;) {
      const step = await gen.next();
      if (step.done) return step.value.text;
    }
  }

  runStream(opts: TurnOptions): AsyncGenerator<AgentEvent, TurnOutcome> {
    const profile = this.deps.profiles.profiles.get(opts.profileId);
    if (!profile) throw new NotFoundError('profile_not_found', `unknown profile '${opts.profileId}'`);
    const services: TurnServices = { ...this.services, spawn: (turn, args) => this.spawn(turn, args) };
    return new Turn(this.deps, opts, this.builder, services, profile).run();
  }

  /**
   * Forced compression of a stored session (seed 000 compact_stream, `navi sessions compact`):
   * bypasses the threshold; `NothingToCompactError` when there is nothing older than what is kept.
   */
  async *compactStream(opts: TurnOptions): AsyncGenerator<AgentEvent, void> {
    const profile = this.deps.profiles.profiles.get(opts.profileId);
    if (!profile) throw new NotFoundError('profile_not_found', `unknown profile '${opts.profileId}'`);
    const { settings, input } = splitTurnOptions(opts);
    const state = new TurnState(this.deps, settings, input, this.builder, profile);
    const store = await this.deps.store;
    state.replaceContext(await store.context.load(opts.sessionId));
    const info = await this.deps.llm.showModel(state.model, opts.signal).catch(() => null);
    state.fitNumCtx(info?.contextLength);
    if (!wouldCompress(state.context, compressionSettings(profile).keepRecent)) throw new NothingToCompactError();
    const change = yield* compressTurn(state, this.deps, 'manual');
    if (change !== null) for (const ev of await state.applyCompression(change)) yield ev;
  }

  /** A sub-agent (seed 000 run_ephemeral): `[text, completedNormally]`. */
  async runEphemeral(message: string, profileId: string, opts: EphemeralOptions): Promise<[string, boolean]> {
    const out = await this.runEphemeralOutcome(message, profileId, opts);
    return [out.text, out.stopReason === 'completed'];
  }

  async runEphemeralOutcome(message: string, profileId: string, opts: EphemeralOptions): Promise<EphemeralOutcome> {
    const profile = this.deps.profiles.profiles.get(profileId);
    if (!profile) throw new NotFoundError('profile_not_found', `unknown profile '${profileId}'`);
    const timeout = AbortSignal.timeout(subagentTimeoutS(opts.timeoutSeconds) * 1000);
    const signal = AbortSignal.any([opts.signal, timeout]);
    const tools = this.subagentTools(profile, opts.toolCeiling);
    const sub: SubagentTurn = {
      parentSessionId: opts.parentSessionId,
      systemPrompt: this.subagentSystemPrompt(profile, opts),
      ...(opts.contextTransfer ? { contextTransfer: opts.contextTransfer } : {}),
      toolNames: tools.kept,
      excludeTools: opts.excludeTools ?? [],
      autoPlan: profile.settings.subagent_planning_enabled,
      agentPath: [...opts.parentAgentPath, profile.id],
      depth: opts.depth,
    };
    const sessionId = randomUUID();
    const gen = this.runStream({
      ...opts.base,
      sessionId,
      newSession: true,
      message,
      profileId,
      signal,
      maxIterations: Math.min(opts.maxIterations ?? SUBAGENT_MAX_ITERATIONS, SUBAGENT_ITERATION_CAP),
      kind: 'subagent',
      parentSessionId: opts.parentSessionId,
      subagent: sub,
    });
    for (;;) {
      const step = await gen.next();
      if (step.done) {
        const timedOut = timeout.aborted && !opts.signal.aborted;
        return { ...step.value, timedOut, sessionId, droppedTools: tools.dropped };
      }
      opts.onEvent?.({ ...step.value, is_subagent: true, agent_path: sub.agentPath });
    }
  }

  /** A sub-agent's tools: its profile's sub-agent list, capped by the starting agent's tools. */
  private subagentTools(profile: Profile, ceiling: readonly string[] | undefined): CappedTools {
    return capTools(toolsForProfile(profile, (n) => this.deps.tools.has(n), true, this.deps.userTools, this.deps.mcpTools), ceiling);
  }

  private subagentSystemPrompt(profile: Profile, opts: EphemeralOptions): string {
    let prompt: string;
    if (opts.customSystemPrompt) prompt = opts.customSystemPrompt;
    else if (opts.inheritSystemPrompt) prompt = opts.inheritSystemPrompt;
    else {
      const own = profile.settings.subagent_system_prompt;
      prompt = own ? composeSystemPrompt(this.deps.profiles.persona, own) : this.builder.systemPrompt(profile.id);
    }
    return opts.briefing ? `${prompt}\n\n## Briefing\n${opts.briefing.trim()}` : prompt;
  }

  /** spawn_agent: a blocking sub-agent whose events go live into the parent's stream. */
  private async spawn(turn: TurnState, args: SpawnArgs): Promise<ToolResult> {
    const profileId = args.profile_id ?? turn.profile.id;
    const profile = this.deps.profiles.profiles.get(profileId);
    if (!profile) {
      return { ok: false, output: `unknown profile '${profileId}'; available: ${[...this.deps.profiles.profiles.keys()].join(', ')}` };
    }
    const { subagent, signal } = turn.input;
    const depth = (subagent?.depth ?? 0) + 1;
    if (depth > MAX_SUBAGENT_DEPTH) {
      return { ok: false, output: `sub-agents nest at most ${MAX_SUBAGENT_DEPTH} deep; do this subtask yourself` };
    }
    const { dropped } = this.subagentTools(profile, turn.toolCeiling);
    const note = droppedToolsNote(dropped);
    if (note) turn.emit({ type: 'warning', code: 'tools_dropped', message: `spawn_agent: sub-agent '${profileId}' gets no ${dropped.join(', ')} (not in the calling agent's tools)` });
    // Inherited: the run's settings only. Not the parent's turn input: its session, task and
    // limits, extra tools such as loop_signal (only the loop's own agent may signal the loop),
    // `--output-schema` (the run's final answer, not the sub-agent's) or the run's tool filter
    // (the tool ceiling already carries it).
    const out = await this.runEphemeralOutcome(args.task, profileId, {
      parentSessionId: subagent?.parentSessionId ?? turn.sessionId,
      parentAgentPath: subagent?.agentPath ?? [turn.profile.id],
      depth,
      signal,
      toolCeiling: turn.toolCeiling,
      base: turn.settings,
      ...(args.max_iterations !== undefined ? { maxIterations: args.max_iterations } : {}),
      ...(args.exclude_tools ? { excludeTools: args.exclude_tools } : {}),
      ...(args.briefing ? { briefing: args.briefing } : {}),
      ...(args.custom_system_prompt ? { customSystemPrompt: args.custom_system_prompt } : {}),
      ...(args.inherit_system_prompt ? { inheritSystemPrompt: turn.systemPrompt() } : {}),
      ...(args.context_transfer ? { contextTransfer: args.context_transfer } : {}),
      ...(args.timeout_seconds !== undefined ? { timeoutSeconds: args.timeout_seconds } : {}),
      onEvent: (ev) => turn.emit(ev),
    });
    const ran = note ? `[sub-agent '${profileId}' ran ${note}]\n` : '';
    if (out.stopReason === 'completed') return { ok: true, output: `${ran}${out.text || '(the sub-agent gave no answer)'}` };
    const why = out.timedOut ? `timed out after ${subagentTimeoutS(args.timeout_seconds)} s` : subagentFailure(out);
    return { ok: false, output: `${ran}[sub-agent ${why}; partial result below]\n${out.text}` };
  }
}

/** Why a sub-agent's turn did not complete, as the calling model reads it. */
function subagentFailure(out: TurnOutcome): string {
  switch (out.stopReason) {
    case 'max_iterations':
      return `hit its iteration limit (${out.iterations})`;
    case 'interrupted':
      return 'was interrupted';
    case 'context_too_large':
      return 'ran out of context';
    case 'truncated':
      return 'was cut off at the output limit';
    case 'model_error':
    case 'completed':
      return `failed: ${out.error ?? 'no usable answer'}`;
  }
}

/** Planning, compression, view truncation and memory extraction, on the agent's dependencies. */
export function agentServices(deps: AgentDeps): Omit<TurnServices, 'spawn'> {
  return {
    plan: (turn, args) => planForTurn(turn, deps, args),
    maybeCompress: (turn, reason) => compressTurn(turn, deps, reason),
    afterTurn: (turn) => extractMemories(turn, deps),
    view: (turn): readonly ChatMessage[] => truncateForView(turn.context, viewBudget(turn.numCtx, deps.messageTokenBudget ?? 0)),
  };
}

/** The sub-agent's timeout in seconds: the asked one (default 300) within 1 s … the cap. */
export function subagentTimeoutS(asked: number | undefined): number {
  return Math.min(SUBAGENT_TIMEOUT_CAP_S, Math.max(1, asked ?? SUBAGENT_TIMEOUT_S));
}

/**
 * `navi run [prompt..]`: one agent turn with the full tool loop, rendered in the chosen output
 * mode, ending in a `result` and the SPEC §4 exit code.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Agent, unknownProfileTools } from '../../agent/agent.js';
import type { StopReason } from '../../agent/events.js';
import type { NaviConfig } from '../../config/schema.js';
import { describeError, EXIT, InvalidInputError, isNaviError, type ExitStatus } from '../../errors.js';
import { createOllamaClient } from '../../llm/ollama-client.js';
import type { Store } from '../../store/types.js';
import { agentTools } from '../../agent/agent-tools.js';
import { builtinTools } from '../../tools/builtin/index.js';
import { createRedactor } from '../../tools/redact.js';
import { ToolRegistry } from '../../tools/registry.js';
import type { GlobalArgs } from '../global-args.js';
import { installStopHandlers } from '../signals.js';
import { createOutput, openConfiguredStore, profilesFor, setup } from '../setup.js';

interface RunArgs extends GlobalArgs {
  prompt?: string[];
  file?: string;
  session?: string;
  maxIterations?: number;
}

/** Reads all of a non-terminal stdin. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The prompt from arguments, `--file F` (`-` for stdin), or piped stdin. */
export async function resolvePrompt(args: RunArgs, cwd: string): Promise<string> {
  const fromArgs = (args.prompt ?? []).join(' ').trim();
  if (fromArgs.length > 0 && args.file !== undefined) {
    throw new InvalidInputError('prompt_ambiguous', 'give the prompt as arguments or with --file, not both');
  }
  let prompt = fromArgs;
  if (args.file !== undefined) {
    if (args.file === '-') prompt = await readStdin();
    else {
      try {
        prompt = readFileSync(resolve(cwd, args.file), 'utf8');
      } catch (err) {
        throw new InvalidInputError('prompt_file_unreadable', `--file ${args.file}: cannot read it (${describeError(err)})`);
      }
    }
  } else if (prompt.length === 0 && process.stdin.isTTY !== true) {
    prompt = await readStdin();
  }
  if (prompt.trim().length === 0) {
    throw new InvalidInputError('prompt_missing', 'no prompt: pass it as arguments, with --file FILE, or on stdin');
  }
  return prompt;
}

const OUTCOMES: Record<StopReason, ExitStatus> = {
  completed: 'success',
  max_iterations: 'incomplete',
  interrupted: 'interrupted',
  context_too_large: 'error',
};

function outcomeMessage(reason: StopReason, iterations: number, sessionId: string): string | null {
  switch (reason) {
    case 'completed':
      return null;
    case 'max_iterations':
      return `stopped after ${iterations} tool-loop iterations (max_iterations); continue with: navi run --session ${sessionId} "continue"`;
    case 'interrupted':
      return `interrupted; everything so far is saved in session ${sessionId}`;
    case 'context_too_large':
      return 'the conversation no longer fits the model context window (num_ctx)';
  }
}

export async function runCommand(argv: GlobalArgs & Record<string, unknown>): Promise<number> {
  const args = argv as RunArgs;
  const started = Date.now();
  const output = createOutput(args);
  let store: Promise<Store> | null = null;
  let sessionId = args.session ?? '';
  const stop = installStopHandlers((sig) => {
    if (output.mode === 'text' && !args.quiet) output.diagnostic(`\nnavi: ${sig} received, stopping… (Ctrl-C again to exit at once)`);
  });
  try {
    const { cwd, env, config, explicit } = setup(args, output);
    const profiles = await profilesFor(cwd);
    const registry = new ToolRegistry([...builtinTools(), ...agentTools()]);
    const prompt = await resolvePrompt(args, cwd);
    if (args.maxIterations !== undefined && (!Number.isInteger(args.maxIterations) || args.maxIterations < 1)) {
      throw new InvalidInputError('flag_invalid', `--max-iterations must be a positive integer (got ${String(args.maxIterations)})`);
    }

    store = openConfiguredStore(config, env);
    // Never an unhandled rejection: the agent's writer reports a failed open.
    store.catch(() => undefined);

    let profileId = args.profile ?? config.default_profile;
    const newSession = args.session === undefined;
    if (!newSession) {
      const existing = await (await store).sessions.get(sessionId);
      if (!existing) throw new InvalidInputError('session_not_found', `no session '${sessionId}'; see: navi sessions list`);
      if (args.profile === undefined) profileId = existing.profile;
    } else {
      sessionId = randomUUID();
    }
    const profile = profiles.profiles.get(profileId);
    if (!profile) {
      throw new InvalidInputError('profile_not_found', `unknown profile '${profileId}'; available: ${[...profiles.profiles.keys()].join(', ')}`);
    }
    const unknown = unknownProfileTools(profile, (n) => registry.has(n));
    if (unknown.length > 0) {
      throw new InvalidInputError('profile_invalid', `${profile.dir}/config.json: tools: unknown tool(s) ${unknown.join(', ')}; available: ${registry.names().join(', ')}`);
    }
    output.setSession(sessionId);

    const agent = new Agent({ llm: llmFor(config), store, tools: registry, profiles });
    const heartbeat = Number(env.NAVI_HEARTBEAT_MS);
    const events = agent.runStream({
      sessionId,
      newSession,
      message: prompt,
      profileId,
      model: config.llm.model,
      cwd,
      numCtx: config.llm.num_ctx,
      numCtxExplicit: explicit.has('llm.num_ctx'),
      think: config.llm.think,
      keepAlive: config.llm.keep_alive,
      temperature: config.llm.temperature,
      maxIterations: args.maxIterations,
      signal: stop.signal,
      interactive: process.stdin.isTTY === true && process.stderr.isTTY === true && !('CI' in env),
      shell: {
        allow: config.tools.shell.allow,
        deny: config.tools.shell.deny,
        timeoutS: config.tools.shell.timeout_s,
        maxOutputBytes: config.tools.shell.max_output_bytes,
      },
      redact: createRedactor(env),
      ...(Number.isFinite(heartbeat) && heartbeat > 0 ? { heartbeatMs: heartbeat } : {}),
    });
    let outcome;
    for (;;) {
      const step = await events.next();
      if (step.done) {
        outcome = step.value;
        break;
      }
      output.event(step.value);
    }
    const status = OUTCOMES[outcome.stopReason];
    const message = outcomeMessage(outcome.stopReason, outcome.iterations, sessionId);
    await output.result({
      status,
      reason: outcome.stopReason,
      exit_code: EXIT[status],
      result: outcome.text,
      num_turns: outcome.modelCalls,
      iterations: outcome.iterations,
      usage: { prompt_tokens: outcome.usage.promptTokens, completion_tokens: outcome.usage.completionTokens },
      duration_ms: Date.now() - started,
      errors: message === null ? [] : [message],
    });
    return EXIT[status];
  } catch (err) {
    const interrupted = stop.signal.aborted && !isNaviError(err);
    const status: ExitStatus = interrupted ? 'interrupted' : isNaviError(err) ? err.status : 'error';
    const code = interrupted ? 'interrupted' : isNaviError(err) ? err.code : 'unexpected_error';
    const message = isNaviError(err) ? err.message : interrupted ? 'interrupted' : `unexpected error: ${describeError(err)}`;
    if (!isNaviError(err) && env().NAVI_DEBUG && err instanceof Error) process.stderr.write(`${err.stack ?? ''}\n`);
    output.setSession(sessionId);
    if (output.mode === 'stream-json') output.event({ type: 'error', code, message });
    await output.result({
      status,
      reason: code,
      exit_code: EXIT[status],
      result: '',
      num_turns: 0,
      usage: { prompt_tokens: 0, completion_tokens: 0 },
      duration_ms: Date.now() - started,
      errors: [message],
    });
    return EXIT[status];
  } finally {
    stop.dispose();
    output.close();
    if (store) await store.then((s) => s.close(), () => undefined);
  }
}

function env(): Record<string, string | undefined> {
  return process.env;
}

function llmFor(config: NaviConfig) {
  return createOllamaClient({
    host: config.llm.host,
    firstChunkTimeoutS: config.llm.first_chunk_timeout_s,
    chunkTimeoutS: config.llm.chunk_timeout_s,
  });
}

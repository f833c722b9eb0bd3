import { z } from 'zod';
import { sandboxRefusals } from '../../sandbox/refusals.js';
import { defineTool } from '../define-tool.js';
import { runCommand, type RunCommandResult } from '../run-command.js';
import { checkShellCommand } from '../shell-policy.js';

/** Room left under the registry's cap for the omitted-bytes marker and the `[exit code N]` line. */
const STATUS_RESERVE_BYTES = 128;

/** More room under --sandbox: up to five refusal notes follow the status line (sandbox/refusals.ts). */
const SANDBOX_NOTES_RESERVE_BYTES = 1024;

/**
 * The timeout a call gets: the model may lower `tools.shell.timeout_s` (the user's setting) but
 * never raise it, so a model cannot keep a command running longer than the user allowed.
 */
export function shellTimeoutS(requested: number | undefined, configured: number): number {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return configured;
  return Math.min(requested, configured);
}

function statusLine(result: RunCommandResult, timeoutS: number, requested: number | undefined): string {
  if (result.spawnError !== undefined) return `[could not start: ${result.spawnError}]`;
  if (result.timedOut) {
    const capped = requested !== undefined && requested > timeoutS ? `; timeout_s is capped at tools.shell.timeout_s` : '';
    return `[timed out after ${timeoutS} s${capped}]`;
  }
  if (result.exitCode !== null) return `[exit code ${result.exitCode}]`;
  return result.exitSignal !== null ? `[killed by signal ${result.exitSignal}]` : '[killed by signal]';
}

/**
 * `shell {command, timeout_s?}`: runs `/bin/sh -c command` in the working directory under the
 * `tools.shell` policy, for at most `tools.shell.timeout_s`. A denied command is a failed result plus a `shell_denied` warning,
 * never a prompt. An abort kills the process group and propagates.
 */
export const shellTool = defineTool({
  name: 'shell',
  description: 'Run a shell command in the working directory; returns its output and exit code.',
  schema: z.object({ command: z.string(), timeout_s: z.coerce.number().optional() }),
  async execute(args, ctx) {
    if (args.command.trim() === '') return { ok: false, output: 'empty command' };
    const verdict = checkShellCommand(args.command, ctx.shell);
    if (!verdict.allowed) {
      ctx.emit({ type: 'warning', code: 'shell_denied', message: ctx.redact(`shell command denied: ${verdict.reason}`) });
      return {
        ok: false,
        output: `denied by tools.shell policy: ${verdict.reason}. The user's configuration forbids it; do not retry, find another way.`,
      };
    }
    const timeoutS = shellTimeoutS(args.timeout_s, ctx.shell.timeoutS);
    const result = await runCommand({
      command: args.command,
      cwd: ctx.cwd,
      timeoutMs: timeoutS * 1000,
      maxOutputBytes: Math.min(
        ctx.shell.maxOutputBytes,
        (ctx.outputLimitBytes ?? Infinity) - STATUS_RESERVE_BYTES - (ctx.shell.sandbox ? SANDBOX_NOTES_RESERVE_BYTES : 0),
      ),
      signal: ctx.signal,
      redact: ctx.redact,
      ...(ctx.shell.sandbox ? { sandbox: ctx.shell.sandbox } : {}),
      ...(ctx.shell.env ? { env: ctx.shell.env } : {}),
    });
    if (result.aborted) ctx.signal.throwIfAborted();
    const output = result.output;
    const separator = output === '' || output.endsWith('\n') ? '' : '\n';
    const status = statusLine(result, timeoutS, args.timeout_s);
    // What the sandbox refused, named after the status so the model adapts instead of retrying.
    const refusals = ctx.shell.sandbox ? sandboxRefusals(output, ctx.shell.sandbox) : [];
    for (const refusal of refusals) ctx.emit({ type: 'warning', code: 'sandbox_refused', message: ctx.redact(refusal.message) });
    const notes = refusals.map((r) => `\n[${r.message}]`).join('');
    return { ok: result.exitCode === 0 && !result.timedOut, output: output + separator + status + notes };
  },
});

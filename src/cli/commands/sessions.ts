/** `navi sessions list|show|rm`. */
import type { CliHost } from '../host.js';
import { NotFoundError } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import { printJson, withStore } from '../setup.js';
import { terminalSafe } from '../terminal-text.js';

type Args = GlobalArgs & Record<string, unknown>;


export async function sessionsList(argv: Args, host: CliHost): Promise<number> {
  const limit = typeof argv.limit === 'number' && argv.limit > 0 ? argv.limit : 20;
  return withStore(argv, host, async (store, json) => {
    const sessions = await store.sessions.list({ limit });
    if (json) {
      printJson(host.stdout, {
        sessions: sessions.map((s) => ({
          id: s.id,
          kind: s.kind,
          profile: s.profile,
          model: s.model,
          cwd: s.cwd,
          parent_id: s.parentId,
          title: s.title,
          prompt_tokens: s.promptTokens,
          completion_tokens: s.completionTokens,
          created_at: s.createdAt.toISOString(),
          updated_at: s.updatedAt.toISOString(),
        })),
      });
      return 0;
    }
    if (sessions.length === 0) {
      host.stdout.write('no sessions yet; start one with: navi run "…"\n');
      return 0;
    }
    for (const s of sessions) {
      const when = s.updatedAt.toISOString().replace('T', ' ').slice(0, 16);
      const title = s.title.length > 60 ? `${s.title.slice(0, 59)}…` : s.title;
      host.stdout.write(`${terminalSafe(`${s.id}  ${when}  ${s.kind.padEnd(8)} ${s.profile.padEnd(10)} ${title}`)}\n`);
    }
    return 0;
  });
}

export async function sessionsShow(argv: Args, host: CliHost): Promise<number> {
  const id = String(argv.id);
  return withStore(argv, host, async (store, json) => {
    const session = await store.sessions.get(id);
    if (!session) throw new NotFoundError('session_not_found', `no session '${id}'; see: navi sessions list`);
    const messages = await store.messages.list(id);
    if (json) {
      printJson(host.stdout, {
        session: { id: session.id, kind: session.kind, profile: session.profile, model: session.model, cwd: session.cwd, title: session.title },
        messages: messages.map((m) => ({
          seq: m.seq,
          role: m.role,
          content: m.content,
          ...(m.thinking ? { thinking: m.thinking } : {}),
          ...(m.tool_calls ? { tool_calls: m.tool_calls } : {}),
          ...(m.tool_name ? { tool_name: m.tool_name } : {}),
          is_plan: m.isPlan,
          created_at: m.createdAt.toISOString(),
        })),
      });
      return 0;
    }
    // Stored messages hold what the model and its tools wrote: nothing in them may drive the terminal.
    const out = [`session ${session.id} (${session.kind}, profile ${session.profile}, model ${session.model})`, `cwd ${session.cwd}`, ''];
    for (const m of messages) {
      const label = m.role === 'tool' ? `tool ${m.tool_name ?? ''}`.trim() : m.isPlan ? 'plan' : m.role;
      out.push(`── ${label} #${m.seq}`);
      if (m.content) out.push(m.content);
      for (const c of m.tool_calls ?? []) out.push(`→ ${c.name} ${typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments)}`);
    }
    host.stdout.write(`${out.map(terminalSafe).join('\n')}\n`);
    return 0;
  });
}

export async function sessionsRemove(argv: Args, host: CliHost): Promise<number> {
  const id = String(argv.id);
  return withStore(argv, host, async (store, json) => {
    const removed = await store.sessions.remove(id);
    if (!removed) throw new NotFoundError('session_not_found', `no session '${id}'; see: navi sessions list`);
    if (json) printJson(host.stdout, { removed: id });
    else host.stdout.write(`removed session ${id}\n`);
    return 0;
  });
}

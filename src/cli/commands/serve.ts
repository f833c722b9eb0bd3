/**
 * `navi serve [--host H] [--port P] [--token T] [--allowed-host NAME]…` (SPEC §14, issues 19 and
 * 35): the REST + WebSocket server on the same agent core, store and event schema as the CLI.
 * This file builds what the server is given (src/serve/types.ts) from the CLI's own setup — the
 * runtime of `navi run` for sessions, the runtime and runner of `navi loop` for loop runs — and
 * runs inside the agent commands' one lifecycle: the first SIGINT/SIGTERM stops running turns and
 * loops at a safe point, saves them, and exits 130. The server stack is imported here, lazily,
 * never on the start-up path of other commands.
 *
 * There is always a token: the one given (`--token`, `NAVI_SERVE_TOKEN`; never printed), else
 * the one kept in navi's data directory (src/serve/token-file.ts). On a terminal the latter is
 * printed once, as the URL that signs the page in through its fragment (`/#token=…`: a fragment
 * never reaches a server, a log or a Referer); elsewhere (a service's log, `-o json`) only the
 * file that holds it is named.
 */
import { readFileSync } from 'node:fs';
import { EXIT, InvalidInputError } from '../../errors.js';
import { PACKAGE_ROOT_URL } from '../../package-root.js';
import { toolsForProfile } from '../../agent/agent.js';
import type { AgentInfo, LoopRequest, ServeDeps, StartedLoop, LoopControl } from '../../serve/types.js';
import { defaultDataDir } from '../../store/open.js';
import { withAgentCommand } from '../command-lifecycle.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { listFlag } from '../agent-flags.js';
import { resolveTask, setUpLoop } from '../loop-setup.js';
import type { Output } from '../output.js';
import { createRuntime, resolveProfile, turnBase, type Runtime } from '../runtime.js';
import { resolveCwd } from '../setup.js';
import { jsonLine } from '../terminal-text.js';

interface ServeArgs extends GlobalArgs {
  host?: string;
  port?: number;
  token?: string;
  /** `--allowed-host NAME` (repeatable): Host names served beside loopback and the bound address. */
  allowedHost?: string | string[];
  /** `--notify URL` (repeatable): added to every loop the server starts, as `navi loop --notify`. */
  notify?: string | string[];
}

/** The token given: `--token`, else NAVI_SERVE_TOKEN; empty counts as none (then navi keeps one). */
export function serveToken(flag: string | undefined, env: Record<string, string | undefined>): string | null {
  const t = (flag ?? env.NAVI_SERVE_TOKEN ?? '').trim();
  return t === '' ? null : t;
}

/** A given token shorter than this is refused: it could be guessed. */
const MIN_TOKEN_LENGTH = 16;

/** Host, port, the given token and the allowed hosts checked before anything opens (exit 2). */
export async function checkServeArgs(
  args: ServeArgs,
  env: Record<string, string | undefined>,
): Promise<{ host: string; port: number; token: string | null; allowedHosts: string[] }> {
  const { parseAllowedHost } = await import('../../serve/request-guard.js');
  const host = (args.host ?? '127.0.0.1').trim();
  const port = args.port ?? 7777;
  if (host === '') throw new InvalidInputError('flag_invalid', '--host: give an address, e.g. 127.0.0.1');
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new InvalidInputError('flag_invalid', `--port must be 0–65535 (got ${String(port)})`);
  const token = serveToken(args.token, env);
  if (token !== null && /\s/.test(token)) throw new InvalidInputError('flag_invalid', 'the serve token must not contain spaces');
  if (token !== null && token.length < MIN_TOKEN_LENGTH) {
    throw new InvalidInputError('flag_invalid', `the serve token must have at least ${MIN_TOKEN_LENGTH} characters (or give none: navi serve makes one)`);
  }
  const given = args.allowedHost === undefined ? [] : Array.isArray(args.allowedHost) ? args.allowedHost : [args.allowedHost];
  const allowedHosts = given.map((v) => {
    const parsed = parseAllowedHost(String(v));
    if (parsed === null) throw new InvalidInputError('flag_invalid', `--allowed-host ${String(v)}: give a host name or address without scheme or port (e.g. navi.example, .example.com for its subdomains, or * for any)`);
    return parsed;
  });
  return { host, port, token, allowedHosts };
}

/** The address a browser on this machine opens for a server bound to `url`'s host (a wildcard is reached through loopback). */
export function browserUrl(url: string, host: string): string {
  const h = host.replace(/^\[|\]$/g, '');
  if (h === '0.0.0.0') return url.replace('//0.0.0.0', '//127.0.0.1');
  if (h === '::' || h === '0:0:0:0:0:0:0:0') return url.replace(/\/\/\[[0:]+\]/, '//[::1]');
  return url;
}

function version(): string {
  return (JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT_URL), 'utf8')) as { version: string }).version;
}

function agentsOf(rt: Runtime): AgentInfo[] {
  const has = (n: string): boolean => rt.registry.has(n);
  const list: AgentInfo[] = [...rt.profiles.profiles.values()].map((p) => ({ id: p.id, description: p.settings.description, tools: toolsForProfile(p, has, false, rt.userTools) }));
  for (const [id, problem] of rt.profiles.broken ?? []) if (!rt.profiles.profiles.has(id)) list.push({ id, description: '', tools: [], problem });
  return list.sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * A loop run started by POST /runs, set up by the one loop set-up `navi loop` uses (loop-setup.ts)
 * on the server's store: the body's options over the server's flags (`--profile`, `--model`,
 * `--sandbox`, `--notify`), so the stored run keeps the sandbox it really runs in.
 */
async function startLoop(args: ServeArgs, base: Runtime, output: Output, req: LoopRequest, control: LoopControl, pageBase: string | undefined): Promise<StartedLoop> {
  const { runLoop } = await import('../../loop/runner.js');
  const task = resolveTask([req.task], base.cwd);
  if (!task.loopMode) throw new InvalidInputError('task_one_shot', `${task.name}: the task asks for one shot (${task.oneShotReason ?? 'loop_mode: false'}); use POST /sessions and a message instead`);
  const { task: _words, ...options } = req;
  const prepared = await setUpLoop(
    { ...options, ...(options.profile === undefined && args.profile !== undefined ? { profile: args.profile } : {}), ...(args.notify !== undefined ? { notify: listFlag(args.notify) } : {}) },
    task,
    {
      args,
      output,
      baseCwd: base.cwd,
      host: base.host,
      naming: 'fields',
      source: 'POST /runs',
      store: base.store,
      interactive: false,
      decisions: () => control.decisions,
      ...(pageBase !== undefined ? { serverBase: pageBase } : {}),
      started: Date.now(),
    },
  );
  const { rt } = prepared;
  const events = runLoop(
    { ...prepared.options, turn: turnBase(rt, control.signal, { loop: true }), signal: control.signal, onOpen: ({ runId, sessionId }) => control.onOpen({ runId, sessionId }) },
    { agent: rt.agent, store: await rt.store },
  );
  return { events, close: async () => void (await rt.mcp?.close()) };
}

export async function serveCommand(argv: GlobalArgs & Record<string, unknown>, cli: CliHost): Promise<number> {
  const args = argv as ServeArgs;
  return withAgentCommand<never>(args, cli, { stopping: 'stopping running turns and loops, saving them…' }, async ({ output, stop, onClose }) => {
    const env = cli.env;
    const { host, port, token: givenToken, allowedHosts } = await checkServeArgs(args, env);
    resolveCwd(args.cwd, cli.cwd);
    const rt = await createRuntime(args, cli, output, { interactive: false });
    onClose(() => Promise.all([rt.store.then((s) => s.close()), rt.mcp?.close()]));
    const store = await rt.store;
    const defaultProfile = args.profile ?? rt.config.default_profile;
    resolveProfile(rt, defaultProfile);
    const [{ startServer }, { keepToken }, { isLoopbackHost }] = await Promise.all([
      import('../../serve/server.js'),
      import('../../serve/token-file.js'),
      import('../../serve/request-guard.js'),
    ]);
    // The token: the one given, else the one kept beside navi's data (after the store opened it, 0700).
    const kept = givenToken === null ? keepToken(rt.config.db.data_dir ?? defaultDataDir(env)) : null;
    const token = givenToken ?? kept?.token ?? '';
    if (kept?.state === 'replaced') output.diagnostic(`navi serve: warning: ${kept.file} was replaced by a new token: ${kept.why ?? ''}`);
    const deps: ServeDeps = {
      store,
      defaults: { profile: defaultProfile, model: rt.config.llm.model, cwd: rt.cwd },
      agents: () => agentsOf(rt),
      checkProfile: (id) => void resolveProfile(rt, id),
      runTurn: (req) =>
        rt.agent.runStream({ ...turnBase(rt, req.signal), model: req.model, sessionId: req.sessionId, newSession: req.newSession, message: req.message, profileId: req.profileId }),
      startLoop: (req, control) => startLoop(args, rt, output, req, control, page.base),
      log: (m) => output.diagnostic(`navi serve: ${m}`),
    };
    // Notifications of the loops it starts link to this server's page (config notify_link_base wins:
    // the address users reach may not be the one it listens on).
    const page: { base?: string } = {};
    const pollMs = Number(env.NAVI_SERVE_POLL_MS);
    let server;
    try {
      server = await startServer(deps, { host, port, token, allowedHosts, version: version(), ...(Number.isFinite(pollMs) && pollMs > 0 ? { pollMs } : {}) });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new InvalidInputError('port_in_use', `port ${port} on ${host} is in use: pick another with --port (0: any free one)`);
      if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new InvalidInputError('host_invalid', `--host ${host}: not an address of this machine`);
      throw err;
    }
    page.base = server.url.replace(/\/+$/, '');
    if (!isLoopbackHost(host)) {
      output.diagnostic(`navi serve: warning: ${host} is reachable from other machines over plain HTTP: the token travels in clear; put TLS in front (a reverse proxy) or reach it through an SSH tunnel`);
    }
    if (output.mode === 'text') {
      const open = browserUrl(server.url, host);
      let line = `navi serve: listening on ${server.url}`;
      if (kept === null) line += '\nnavi serve: the page asks for the token you gave (--token or NAVI_SERVE_TOKEN)';
      // The token itself only on a terminal: a service's stderr is a log.
      else if (cli.stderr.isTTY === true) line += `\nnavi serve: open ${open}/#token=${kept.token} (signs the page in; the token is kept in ${kept.file})`;
      else line += `\nnavi serve: the token is in ${kept.file}; open ${open}/#token=<the token> to sign the page in`;
      cli.stderr.write(`${line}\n`);
    } else {
      // Scripts find the token in the file (never on stdout); null: the token is the one they gave.
      cli.stdout.write(`${jsonLine({ type: 'serve_listening', url: server.url, host, port: server.port, token_required: true, token_file: kept?.file ?? null, store: store.backend })}\n`);
    }
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.stop();
    if (output.mode === 'text' && !args.quiet) cli.stderr.write('navi serve: stopped; running turns and loops were saved\n');
    return EXIT.interrupted;
  });
}

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SHELL_DENY } from '../../src/config/defaults.js';
import { configFlags, type AgentFlagArgs } from '../../src/cli/agent-flags.js';
import type { GlobalArgs } from '../../src/cli/global-args.js';
import { loadConfig, type ConfigFlags, type LoadConfigOptions } from '../../src/config/load.js';
import { assertLoopSafety, isMaxIterationsExplicit } from '../../src/config/loop-guard.js';
import { defaultConfig } from '../../src/config/schema.js';
import { KEEP_ALIVE_HINT } from '../../src/config/keep-alive.js';
import { InvalidInputError } from '../../src/errors.js';
import { scratch, thrown, type Scratch } from './helpers.js';

let s: Scratch;
let cwd: string;
let home: string;

beforeEach(() => {
  s = scratch();
  cwd = join(s.root, 'proj');
  home = join(s.root, 'home');
  s.write('proj/.keep', '');
  s.write('home/.keep', '');
});
afterEach(() => s.cleanup());

const USER_FILE = 'home/.config/navi/config.json';

/** Flags as the CLI hands them to loadConfig: `configFlags` reads the flag table's `configKey`s. */
function flags(args: Partial<GlobalArgs & AgentFlagArgs>): ConfigFlags {
  return configFlags({ output: 'text', quiet: false, color: true, ...args });
}

function load(extra: Partial<LoadConfigOptions> = {}) {
  return loadConfig({ cwd, home, env: {}, ...extra });
}

function configError(extra: Partial<LoadConfigOptions> = {}) {
  const err = thrown(() => load(extra));
  expect(err).toBeInstanceOf(InvalidInputError);
  expect(err.code).toBe('config_invalid');
  expect(err.exitCode).toBe(2);
  // One line, never a stack: the CLI prints only the first line.
  expect(err.message).not.toContain('\n');
  return err.message;
}

describe('defaults', () => {
  it('no file, env or flag gives seed 004 loop_mode and the llm defaults', () => {
    const { config, warnings, sources, explicit } = load();
    expect(config.loop_mode).toEqual({
      enabled: false,
      max_iterations: 5,
      stagnation_threshold: 3,
      exit_requires_explicit_signal: true,
      show_status_block: true,
      iteration_approval: 'none',
      periodic_interval: 3,
      never_pause_on_stagnation: false,
      stagnation_diversify_strategy: 'combine',
    });
    expect(config.llm).toEqual({
      host: 'http://127.0.0.1:11434',
      model: 'qwen3:8b',
      num_ctx: 65536,
      think: true,
      keep_alive: '30m',
      first_chunk_timeout_s: 90,
      chunk_timeout_s: 60,
      call_timeout_s: 3600,
    });
    expect(config.default_profile).toBe('default');
    expect(config.tools.shell).toEqual({ allow: [], deny: [...DEFAULT_SHELL_DENY], timeout_s: 120, max_output_bytes: 65536 });
    expect(config.db).toEqual({});
    expect(config.budget).toEqual({});
    expect(config.context_message_token_budget).toBe(0);
    expect(warnings).toEqual([]);
    expect(sources).toEqual([]);
    expect(explicit.loopMaxIterations).toBe(false);
    expect(config).toEqual(defaultConfig());
  });

  it('hands out a fresh deny list each time (no shared mutable default)', () => {
    load().config.tools.shell.deny.push('mutated');
    expect(load().config.tools.shell.deny).toEqual([...DEFAULT_SHELL_DENY]);
  });
});

describe('precedence: flags > env > project file > user file > defaults', () => {
  const cases: Array<{ name: string; user?: string; project?: string; env?: string; flag?: string; want: string }> = [
    { name: 'defaults only', want: 'qwen3:8b' },
    { name: 'user file', user: 'u', want: 'u' },
    { name: 'project file beats user file', user: 'u', project: 'p', want: 'p' },
    { name: 'env beats project file', user: 'u', project: 'p', env: 'e', want: 'e' },
    { name: 'flag beats env', user: 'u', project: 'p', env: 'e', flag: 'f', want: 'f' },
    { name: 'flag beats user file alone', user: 'u', flag: 'f', want: 'f' },
    { name: 'env beats user file alone', user: 'u', env: 'e', want: 'e' },
  ];
  it.each(cases)('$name → $want', ({ user, project, env, flag, want }) => {
    if (user) s.write(USER_FILE, { llm: { model: user } });
    if (project) s.write('proj/.nav-config.json', { llm: { model: project } });
    const { config } = load({ env: env ? { NAVI_MODEL: env } : {}, flags: flags(flag ? { model: flag } : {}) });
    expect(config.llm.model).toBe(want);
  });

  it('deep-merges blocks: keys from lower layers survive a higher layer that sets others', () => {
    s.write(USER_FILE, { llm: { num_ctx: 8192, model: 'u' }, loop_mode: { stagnation_threshold: 4 } });
    s.write('proj/.nav-config.json', { llm: { model: 'p' }, loop_mode: { max_iterations: 9 } });
    const { config, sources } = load({ flags: flags({ ollamaHost: 'http://gpu:11434' }) });
    expect(config.llm).toMatchObject({ num_ctx: 8192, model: 'p', host: 'http://gpu:11434', think: true });
    expect(config.loop_mode).toMatchObject({ stagnation_threshold: 4, max_iterations: 9, enabled: false });
    expect(sources).toEqual([join('~', '.config', 'navi', 'config.json'), '.nav-config.json', '--ollama-host']);
  });

  it('arrays replace rather than concatenate', () => {
    s.write(USER_FILE, { tools: { shell: { deny: ['a*'] } } });
    s.write('proj/.nav-config.json', { tools: { shell: { deny: ['b*'] } } });
    expect(load().config.tools.shell.deny).toEqual(['b*']);
  });

  it('every flag lands on its key', () => {
    const { config } = load({
      flags: flags({ ollamaHost: 'gpu:9999', model: 'llama3', db: 'postgres://u@h/db', profile: 'coder', think: 'low', temperature: '0.3', numCtx: 4096, sandbox: 'read-only' }),
    });
    expect(config.llm.host).toBe('http://gpu:9999');
    expect(config.llm.model).toBe('llama3');
    expect(config.db.url).toBe('postgres://u@h/db');
    expect(config.default_profile).toBe('coder');
    expect(config.llm).toMatchObject({ think: 'low', temperature: 0.3, num_ctx: 4096 });
    expect(config.sandbox.mode).toBe('read-only');
  });

  it('every environment variable lands on its key', () => {
    const { config, sources } = load({
      env: {
        OLLAMA_HOST: '10.0.0.2',
        NAVI_MODEL: 'mistral',
        OLLAMA_NUM_CTX: '16384',
        DATABASE_URL: 'postgresql://localhost/test',
        NAVI_DATA_DIR: 'data',
        LLM_STREAM_FIRST_CHUNK_TIMEOUT: '0.5',
        LLM_STREAM_CHUNK_TIMEOUT: '2',
        CONTEXT_MESSAGE_TOKEN_BUDGET: '1000',
      },
    });
    expect(config.llm).toMatchObject({
      host: 'http://10.0.0.2:11434',
      model: 'mistral',
      num_ctx: 16384,
      first_chunk_timeout_s: 0.5,
      chunk_timeout_s: 2,
    });
    expect(config.db).toEqual({ url: 'postgresql://localhost/test', data_dir: join(cwd, 'data') });
    expect(config.context_message_token_budget).toBe(1000);
    expect(sources).toContain('env OLLAMA_HOST');
  });

  it('an empty environment variable counts as unset', () => {
    s.write('proj/.nav-config.json', { llm: { host: 'http://file:1' } });
    expect(load({ env: { OLLAMA_HOST: '', LLM_STREAM_CHUNK_TIMEOUT: '  ' } }).config.llm.host).toBe('http://file:1');
  });
});

describe('which project file', () => {
  it("falls back to navigator's .agent/.nav-config.json when ./.nav-config.json is absent", () => {
    s.write('proj/.agent/.nav-config.json', { loop_mode: { max_iterations: 7 } });
    const r = load();
    expect(r.config.loop_mode.max_iterations).toBe(7);
    expect(r.sources).toEqual([join('.agent', '.nav-config.json')]);
  });

  it('./.nav-config.json wins over .agent/.nav-config.json (which is then not read at all)', () => {
    s.write('proj/.nav-config.json', { loop_mode: { max_iterations: 6 } });
    s.write('proj/.agent/.nav-config.json', '{ not json');
    expect(load().config.loop_mode.max_iterations).toBe(6);
  });

  it('--config replaces the project file, relative to cwd', () => {
    s.write('proj/.nav-config.json', { llm: { model: 'project' } });
    s.write('proj/alt/navi.json', { llm: { model: 'alt' } });
    const r = load({ configFile: 'alt/navi.json' });
    expect(r.config.llm.model).toBe('alt');
    expect(r.sources).toEqual([join('alt', 'navi.json')]);
  });

  it('--config naming a missing file is an error naming it', () => {
    expect(configError({ configFile: 'nope.json' })).toBe('nope.json: file not found');
  });

  it('without a usable home directory the user file is skipped, not read relative to the process', () => {
    expect(load({ home: '' }).sources).toEqual([]);
  });

  it('a user file under XDG_CONFIG_HOME is used instead of ~/.config', () => {
    s.write(USER_FILE, { llm: { model: 'home' } });
    s.write('xdg/navi/config.json', { llm: { model: 'xdg' } });
    expect(load({ env: { XDG_CONFIG_HOME: join(s.root, 'xdg') } }).config.llm.model).toBe('xdg');
    // Relative XDG_CONFIG_HOME is ignored, as the XDG spec says.
    expect(load({ env: { XDG_CONFIG_HOME: 'xdg' } }).config.llm.model).toBe('home');
  });
});

describe('unknown keys', () => {
  it('unknown top-level keys are ignored with one warning per file', () => {
    s.write('proj/.nav-config.json', { project_name: 'x', tech_stack: 'ts', loop_mode: { max_iterations: 4 } });
    const r = load();
    expect(r.config.loop_mode.max_iterations).toBe(4);
    expect(r.warnings).toEqual(['.nav-config.json: ignoring unknown keys project_name, tech_stack']);
    expect(Object.keys(r.config)).not.toContain('project_name');
  });

  it.each([
    [{ loop_mode: { max_iteration: 5 } }, 'loop_mode.max_iteration: unknown key (allowed: enabled, max_iterations,'],
    [{ llm: { hots: 'x' } }, 'llm.hots: unknown key (allowed: host, model,'],
    [{ tools: { shell: { denny: [] } } }, 'tools.shell.denny: unknown key (allowed: allow, deny, timeout_s, max_output_bytes)'],
    [{ db: { uri: 'postgres://x' } }, 'db.uri: unknown key (allowed: url, data_dir)'],
    [{ budget: { tokens: 5 } }, 'budget.tokens: unknown key'],
  ])('nested unknown key %j is an error naming its path', (content, want) => {
    s.write('proj/.nav-config.json', content);
    const msg = configError();
    expect(msg.startsWith('.nav-config.json: ')).toBe(true);
    expect(msg).toContain(want);
  });
});

describe('bad values name the file, the key, what is allowed and what was given', () => {
  const cases: Array<[string, object, string]> = [
    ['max_iterations too big', { loop_mode: { max_iterations: 50 } }, 'loop_mode.max_iterations: must be an integer between 1 and 20 (got 50)'],
    ['max_iterations zero', { loop_mode: { max_iterations: 0 } }, 'loop_mode.max_iterations: must be an integer between 1 and 20 (got 0)'],
    ['max_iterations fractional', { loop_mode: { max_iterations: 2.5 } }, 'loop_mode.max_iterations: must be an integer between 1 and 20 (got 2.5)'],
    ['max_iterations string', { loop_mode: { max_iterations: '5' } }, 'loop_mode.max_iterations: must be an integer between 1 and 20 (got "5")'],
    ['stagnation_threshold low', { loop_mode: { stagnation_threshold: 1 } }, 'loop_mode.stagnation_threshold: must be an integer between 2 and 5 (got 1)'],
    ['stagnation_threshold high', { loop_mode: { stagnation_threshold: 6 } }, 'loop_mode.stagnation_threshold: must be an integer between 2 and 5 (got 6)'],
    ['periodic_interval', { loop_mode: { periodic_interval: 0 } }, 'loop_mode.periodic_interval: must be a positive integer (got 0)'],
    ['iteration_approval', { loop_mode: { iteration_approval: 'always' } }, 'loop_mode.iteration_approval: must be one of "none", "strict", "periodic" (got "always")'],
    ['strategy', { loop_mode: { stagnation_diversify_strategy: 'random' } }, 'loop_mode.stagnation_diversify_strategy: must be one of "combine", "radical", "reread" (got "random")'],
    ['boolean as string', { loop_mode: { enabled: 'yes' } }, 'loop_mode.enabled: must be true or false (got "yes")'],
    [
      'block not an object',
      { loop_mode: true },
      'loop_mode: must be an object with keys enabled, max_iterations, stagnation_threshold, exit_requires_explicit_signal, ' +
        'show_status_block, iteration_approval, periodic_interval, never_pause_on_stagnation, stagnation_diversify_strategy (got true)',
    ],
    ['num_ctx', { llm: { num_ctx: -1 } }, 'llm.num_ctx: must be a positive integer (got -1)'],
    ['think level', { llm: { think: 'max' } }, 'llm.think: must be true, false, or one of "low", "medium", "high" (got "max")'],
    ['think as a word', { llm: { think: 'yes' } }, 'llm.think: must be true, false, or one of "low", "medium", "high" (got "yes")'],
    ['timeout', { llm: { chunk_timeout_s: 0 } }, 'llm.chunk_timeout_s: must be a positive number of seconds (got 0)'],
    ['temperature', { llm: { temperature: 3 } }, 'llm.temperature: must be a number between 0 and 2 (got 3)'],
    ['host', { llm: { host: 'ftp://x' } }, 'llm.host: must be an Ollama URL such as http://127.0.0.1:11434 or host:port (got "ftp://x")'],
    ['keep_alive', { llm: { keep_alive: 'forever' } }, `llm.keep_alive: ${KEEP_ALIVE_HINT} (got "forever")`],
    ['keep_alive days', { llm: { keep_alive: '1d' } }, `llm.keep_alive: ${KEEP_ALIVE_HINT} (got "1d")`],
    ['keep_alive boolean', { llm: { keep_alive: true } }, `llm.keep_alive: ${KEEP_ALIVE_HINT} (got true)`],
    ['db url', { db: { url: 'mysql://x' } }, 'db.url: must be a postgres:// or postgresql:// URL (got "mysql://x")'],
    ['deny list', { tools: { shell: { deny: 'rm*' } } }, 'tools.shell.deny: must be an array of strings (got "rm*")'],
    ['deny entry', { tools: { shell: { deny: ['ok', 3] } } }, 'tools.shell.deny[1]: must be a non-empty string (got 3)'],
    ['max_tokens', { budget: { max_tokens: 0 } }, 'budget.max_tokens: must be a positive integer (got 0)'],
    ['deadline', { budget: { deadline: '8 hours' } }, 'budget.deadline: must be a duration such as 90s, 30m, 8h or 1h30m (got "8 hours")'],
    ['default_profile', { default_profile: '../x' }, 'default_profile: must be a profile id (letters, digits, ".", "_" or "-") (got "../x")'],
    ['context budget', { context_message_token_budget: -5 }, 'context_message_token_budget: must be an integer of at least 0 (got -5)'],
  ];
  it.each(cases)('%s', (_name, content, want) => {
    s.write('proj/.nav-config.json', content);
    expect(configError()).toBe(`.nav-config.json: ${want}`);
  });

  it('lists several problems in one line', () => {
    s.write('proj/.nav-config.json', { loop_mode: { max_iterations: 50, stagnation_threshold: 9 } });
    expect(configError()).toBe(
      '.nav-config.json: loop_mode.max_iterations: must be an integer between 1 and 20 (got 50); ' +
        'loop_mode.stagnation_threshold: must be an integer between 2 and 5 (got 9)',
    );
  });

  it('names the user file when the bad value is there, even if a higher layer overrides it', () => {
    s.write(USER_FILE, { loop_mode: { max_iterations: 99 } });
    s.write('proj/.nav-config.json', { loop_mode: { max_iterations: 5 } });
    expect(configError()).toBe(
      `${join('~', '.config', 'navi', 'config.json')}: loop_mode.max_iterations: must be an integer between 1 and 20 (got 99)`,
    );
  });

  it('a file that is not a JSON object', () => {
    s.write('proj/.nav-config.json', '[1, 2]');
    expect(configError()).toBe('.nav-config.json: must be a JSON object ({ ... }), got an array');
  });

  it('--think: a level or a boolean from the flags (`flags.think`) lands on llm.think; anything else names the flag', () => {
    for (const think of ['low', 'medium', 'high', true, false] as const) expect(load({ flags: flags({ think }) }).config.llm.think).toBe(think);
    expect(load({}).config.llm.think).toBe(true);
    // The CLI refuses it first (agent-flags.ts thinkFlag); the loader names the flag too.
    expect(configError({ flags: [{ flag: '--think', key: 'llm.think', value: 'extreme' }] })).toBe('--think: must be true, false, or one of "low", "medium", "high" (got "extreme")');
  });

  it('a bad flag names the flag', () => {
    expect(configError({ flags: flags({ db: 'sqlite://x' }) })).toBe('--db: must be a postgres:// or postgresql:// URL (got "sqlite://x")');
    expect(configError({ flags: flags({ profile: '' }) })).toMatch(/^--profile: must be a profile id/);
  });
});

describe('environment variables', () => {
  it.each([
    ['LLM_STREAM_FIRST_CHUNK_TIMEOUT', 'abc', 'must be a positive number of seconds (got "abc")'],
    ['LLM_STREAM_CHUNK_TIMEOUT', '10s', 'must be a positive number of seconds (got "10s")'],
    ['LLM_STREAM_CHUNK_TIMEOUT', '-1', 'must be a positive number of seconds (got -1)'],
    ['OLLAMA_NUM_CTX', 'lots', 'must be a positive integer (got "lots")'],
    ['CONTEXT_MESSAGE_TOKEN_BUDGET', '1.5', 'must be an integer of at least 0 (got 1.5)'],
    ['DATABASE_URL', 'mysql://db', 'must be a postgres:// or postgresql:// URL (got "mysql://db")'],
  ])('%s=%s is an error naming the variable', (name, value, want) => {
    expect(configError({ env: { [name]: value } })).toBe(`environment variable ${name}: ${want}`);
  });

  it.each([
    ['127.0.0.1:11434', 'http://127.0.0.1:11434'],
    ['gpu-box', 'http://gpu-box:11434'],
    [':8080', 'http://127.0.0.1:8080'],
    ['http://localhost:11434/', 'http://localhost:11434'],
    ['https://ollama.example.com', 'https://ollama.example.com'],
  ])('OLLAMA_HOST=%s → %s', (value, want) => {
    expect(load({ env: { OLLAMA_HOST: value } }).config.llm.host).toBe(want);
  });
});

describe('invalid JSON names line and column', () => {
  it.each([
    ['{"llm": x}', '.nav-config.json:1:9: invalid JSON: Unexpected token \'x\''],
    ['{\n  "loop_mode": {\n    "enabled": true,\n  }\n}', '.nav-config.json:4:3: invalid JSON: Expected double-quoted property name'],
    ['{\n  "llm": {}\n', ".nav-config.json:3:1: invalid JSON: Expected ',' or '}' after property value"],
    ['{"llm": {"model": "a', '.nav-config.json:1:21: invalid JSON: Unterminated string'],
    ['{"a": 1} {', '.nav-config.json:1:10: invalid JSON: Unexpected non-whitespace character after JSON'],
    ['', '.nav-config.json:1:1: invalid JSON: the file is empty'],
  ])('%j', (content, want) => {
    s.write('proj/.nav-config.json', content);
    expect(configError()).toBe(want);
  });

  it('ignores a UTF-8 byte-order mark', () => {
    s.write('proj/.nav-config.json', '\uFEFF{"llm": {"model": "bom"}}');
    expect(load().config.llm.model).toBe('bom');
  });
});

describe('paths', () => {
  it('data_dir and tools.paths are resolved against the file that set them; ~ is home', () => {
    s.write(USER_FILE, { db: { data_dir: 'pg' }, tools: { paths: ['~/my-tools', 'rel-tools'] } });
    const { config } = load();
    expect(config.db.data_dir).toBe(join(home, '.config', 'navi', 'pg'));
    expect(config.tools.paths).toEqual([join(home, 'my-tools'), join(home, '.config', 'navi', 'rel-tools')]);
  });
});

describe('safety guard: never_pause_on_stagnation needs an explicit max_iterations', () => {
  it('never_pause without max_iterations anywhere is an error naming the file', () => {
    s.write('proj/.nav-config.json', { loop_mode: { never_pause_on_stagnation: true } });
    const msg = configError();
    expect(msg).toMatch(/^\.nav-config\.json: loop_mode: never_pause_on_stagnation is true but max_iterations is not set explicitly/);
  });

  it.each([
    ['in the same file', { loop_mode: { never_pause_on_stagnation: true, max_iterations: 5 } }, undefined],
    ['in the user file below', { loop_mode: { never_pause_on_stagnation: true } }, { loop_mode: { max_iterations: 5 } }],
  ])('max_iterations %s satisfies it', (_name, project, user) => {
    s.write('proj/.nav-config.json', project);
    if (user) s.write(USER_FILE, user);
    const r = load();
    expect(r.config.loop_mode.never_pause_on_stagnation).toBe(true);
    expect(r.explicit.loopMaxIterations).toBe(true);
  });

  it('a loop override (task file) can supply max_iterations, or turn never_pause on itself', () => {
    s.write('proj/.nav-config.json', { loop_mode: { never_pause_on_stagnation: true } });
    const ok = load({ loopOverrides: [{ source: 'tasks/fix.yaml', key: 'loop', values: { max_iterations: 8 } }] });
    expect(ok.config.loop_mode).toMatchObject({ max_iterations: 8, never_pause_on_stagnation: true });
    expect(ok.sources).toEqual(['.nav-config.json', 'tasks/fix.yaml']);

    s.write('proj/.nav-config.json', {});
    const msg = configError({ loopOverrides: [{ source: 'tasks/fix.yaml', key: 'loop', values: { never_pause_on_stagnation: true } }] });
    expect(msg).toMatch(/^tasks\/fix\.yaml: loop: never_pause_on_stagnation is true/);
  });

  it('loop overrides are validated like files, named by their source and key', () => {
    expect(
      configError({ loopOverrides: [{ source: 'tasks/fix.yaml', key: 'loop', values: { max_iterations: 30, stop: 1 } }] }),
    ).toBe(
      'tasks/fix.yaml: loop.max_iterations: must be an integer between 1 and 20 (got 30); ' +
        'tasks/fix.yaml: loop.stop: unknown key (allowed: enabled, max_iterations, stagnation_threshold, exit_requires_explicit_signal, ' +
        'show_status_block, iteration_approval, periodic_interval, never_pause_on_stagnation, stagnation_diversify_strategy)',
    );
  });

  it('explicit.keys lists what some layer set', () => {
    s.write('proj/.nav-config.json', { loop_mode: { max_iterations: 3 }, llm: { think: false } });
    const { explicit } = load({ env: { NAVI_MODEL: 'm' } });
    expect([...explicit.keys].sort()).toEqual(['llm.model', 'llm.think', 'loop_mode.max_iterations']);
  });
});

describe('loop guard helpers', () => {
  it.each([
    [[], false],
    [[undefined, {}], false],
    [[{ never_pause_on_stagnation: true }], false],
    [[{ max_iterations: 5 }], true],
    [[{}, { max_iterations: 20 }], true],
    [[[5], 'max_iterations'], false],
  ])('isMaxIterationsExplicit(%j) → %s', (layers, want) => {
    expect(isMaxIterationsExplicit(layers)).toBe(want);
  });

  it('assertLoopSafety only objects to never_pause without an explicit cap', () => {
    expect(() => assertLoopSafety({ never_pause_on_stagnation: false }, false, 'x')).not.toThrow();
    expect(() => assertLoopSafety({ never_pause_on_stagnation: true }, true, 'x')).not.toThrow();
    const err = thrown(() => assertLoopSafety({ never_pause_on_stagnation: true }, false, '--never-pause'));
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(err.message).toMatch(/^--never-pause: never_pause_on_stagnation is true but max_iterations is not set explicitly/);
  });

  it('a loop override without values (a task with no loop block) is not a source', () => {
    expect(load({ loopOverrides: [{ source: 't.yaml', key: 'loop', values: undefined }] }).sources).toEqual([]);
  });
});

describe('llm values as Ollama reads them (SPEC §13)', () => {
  it.each<[unknown, string | number]>([
    ['-1', -1],
    [-1, -1],
    ['3600', 3600],
    ['1h30m', '1h30m'],
    ['0', 0],
  ])('keep_alive %j in a file loads as the wire value %j', (value, want) => {
    s.write('proj/.nav-config.json', { llm: { keep_alive: value } });
    expect(load().config.llm.keep_alive).toBe(want);
  });

  it('a file keep_alive overrides the user file after both were converted', () => {
    s.write(USER_FILE, { llm: { keep_alive: '3600' } });
    s.write('proj/.nav-config.json', { llm: { keep_alive: '-1' } });
    expect(load().config.llm.keep_alive).toBe(-1);
  });

  it.each([
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['::', 'http://[::1]:11434'],
    ['::1', 'http://[::1]:11434'],
    ['gpu-box', 'http://gpu-box:11434'],
  ])('OLLAMA_HOST=%j connects to %j', (value, want) => {
    expect(load({ env: { OLLAMA_HOST: value } }).config.llm.host).toBe(want);
  });

  it('an OLLAMA_HOST with a port out of range is an exit-2 error naming the variable', () => {
    expect(configError({ env: { OLLAMA_HOST: 'gpu-box:99999' } })).toBe(
      'environment variable OLLAMA_HOST: must be an Ollama URL such as http://127.0.0.1:11434 or host:port (got "gpu-box:99999")',
    );
  });
});

/**
 * The layered configuration loader (SPEC §5). Precedence, highest first:
 *   flags > env > loop overrides (task `loop` block, `navi loop` flags) >
 *   (`--config FILE` | `./.nav-config.json` | `./.agent/.nav-config.json`) >
 *   `$XDG_CONFIG_HOME/navi/config.json` (default `~/.config/navi/config.json`) > defaults.
 * Each layer is validated on its own, so an error names the file (or variable, or flag) that
 * holds the bad value even when a higher layer would have overridden it; then the layers are
 * deep-merged (objects merge, arrays and scalars replace) and the result parsed once more for
 * the defaults. Synchronous and import-light: it runs before every command.
 */

import { isAbsolute, join, relative, resolve, dirname, sep } from 'node:path';
import { InvalidInputError, printable } from '../errors.js';
import { isRecord } from '../util/guards.js';
import { formatProblems, problemsFrom } from './issues.js';
import { readJsonFile } from './json-file.js';
import { assertLoopSafety, isMaxIterationsExplicit } from './loop-guard.js';
import { MCP_JSON_FILE, mcpJsonKey, readMcpJson, readMcpServersFile } from './mcp-json.js';
import { ignoredWarning, presentProjectFiles, projectFilesIgnored } from './project-files.js';
import { applyFloor, parseFloor, SANDBOX_FLOOR_ENV } from '../sandbox/floor.js';
import { CONFIG_KEYS, expandSandboxShorthand, NaviConfigSchema, type NaviConfig } from './schema.js';

/**
 * One configuration key set on the command line (`--ollama-host URL` → `llm.host`); flags are the
 * highest layer. The CLI makes these from its flag table (cli/flags.ts, `configKey`), so this
 * loader knows no flag names: each is only the label of its layer in messages and `sources`.
 */
export interface ConfigFlag {
  /** As typed: `--ollama-host`. */
  flag: string;
  /** The dotted key it sets: `llm.host`. */
  key: string;
  /** As the flag gave it (the schema checks it, naming the flag). */
  value: unknown;
}

/** The flags that set configuration keys, lowest precedence first (the last of two on one key wins). */
export type ConfigFlags = readonly ConfigFlag[];

/** An override above the config files: a task file's `loop` or `sandbox` block, `navi loop` flags. */
export interface LoopOverride {
  /** Who set it, used in messages: `tasks/fix.yaml`, `command line`. */
  source: string;
  /** The key the values sit under in that source, used in messages: `loop`, `loop_mode`. */
  key: string;
  /** Raw keys of `target` (validated here like any other layer). */
  values: unknown;
  /** The config block it overrides: `loop_mode` (default), or `sandbox` (a task file's). */
  target?: 'loop_mode' | 'sandbox';
}

/** Inputs of loadConfig; everything from the outside world is passed in, nothing is read from `process`. */
export interface LoadConfigOptions {
  /** Working directory (`--cwd`): where `.nav-config.json` is looked for. */
  cwd: string;
  /** `--config FILE` (relative to cwd); replaces the project file and must exist. */
  configFile?: string;
  /** Environment (usually process.env). */
  env: Record<string, string | undefined>;
  /** The flags that set configuration keys (the CLI's `configFlags`). */
  flags?: ConfigFlags;
  /** Home directory, for `~/.config/navi/config.json` and `~/` in paths. */
  home: string;
  /** loop_mode overrides, lowest precedence first; the safety guard is checked after them. */
  loopOverrides?: readonly LoopOverride[];
  /** `--mcp-config FILE` (relative to cwd): files with `mcpServers` as in `.mcp.json`, above the project's config. */
  mcpConfigFiles?: readonly string[];
}

/** What was set explicitly (by any file, variable or flag) rather than defaulted. */
export interface ConfigExplicit {
  /** Dotted keys given by some layer, e.g. `loop_mode.max_iterations`, `llm.host`. */
  keys: ReadonlySet<string>;
  /** `loop_mode.max_iterations` was written somewhere (seed 004's safety guard). */
  loopMaxIterations: boolean;
}

/** Result of loadConfig. */
export interface LoadedConfig {
  /** The merged, validated configuration. */
  config: NaviConfig;
  /** Things the user should hear about but that do not stop the run (unknown top-level keys). */
  warnings: string[];
  /** What contributed, lowest precedence first: file paths, `env NAME`, `--flag`, override sources. */
  sources: string[];
  /** Which keys were explicit. */
  explicit: ConfigExplicit;
}

type Raw = Record<string, unknown>;

interface Layer {
  source: string;
  raw: Raw;
  /** A file name (problems listed as `<file>: key: …`), or the prefix for a problem at a dotted key. */
  label: string | ((path: string) => string);
}

/** Environment variables honoured, as [variable, dotted key, numeric]. */
const ENV_KEYS: ReadonlyArray<readonly [string, string, boolean]> = [
  ['OLLAMA_HOST', 'llm.host', false],
  ['NAVI_MODEL', 'llm.model', false],
  ['OLLAMA_NUM_CTX', 'llm.num_ctx', true],
  ['LLM_STREAM_FIRST_CHUNK_TIMEOUT', 'llm.first_chunk_timeout_s', true],
  ['LLM_STREAM_CHUNK_TIMEOUT', 'llm.chunk_timeout_s', true],
  ['DATABASE_URL', 'db.url', false],
  ['NAVI_DATA_DIR', 'db.data_dir', false],
  ['CONTEXT_MESSAGE_TOKEN_BUDGET', 'context_message_token_budget', true],
];

function setPath(target: Raw, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let cur = target;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    cur = isRecord(next) ? next : (cur[key] = {});
  }
  cur[keys[keys.length - 1] ?? ''] = value;
}

function getPath(source: Raw, dotted: string): unknown {
  let cur: unknown = source;
  for (const key of dotted.split('.')) {
    if (!isRecord(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Maps whose entries a higher layer replaces whole (a project's `github` server is not merged into the user's). */
const REPLACED_ENTRIES = new Set(['mcp.servers']);

/** Objects merge key by key; anything else (arrays included) from `over` replaces. */
function deepMerge(base: Raw, over: Raw, at = ''): Raw {
  const out: Raw = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const prev = out[key];
    out[key] = isRecord(prev) && isRecord(value) && !REPLACED_ENTRIES.has(at) ? deepMerge(prev, value, at === '' ? key : `${at}.${key}`) : value;
  }
  return out;
}

/** Dotted paths of every leaf (non-object value) in `raw`. */
function leafPaths(raw: Raw, prefix = ''): string[] {
  return Object.entries(raw).flatMap(([key, value]) =>
    value === undefined ? [] : isRecord(value) ? leafPaths(value, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

/** `path` as the user would type it: relative to cwd when inside it, `~/…` under home, else absolute. */
function displayPath(path: string, cwd: string, home: string): string {
  const rel = relative(cwd, path);
  if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) return rel;
  const fromHome = relative(home, path);
  if (home !== '' && fromHome !== '' && !fromHome.startsWith('..') && !isAbsolute(fromHome)) return `~${sep}${fromHome}`;
  return path;
}

/** Absolute form of a user-written path: `~/` is home, relative is against `base`. */
function resolveUserPath(value: string, base: string, home: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return join(home, value.slice(2));
  return resolve(base, value);
}

/** Paths inside a layer become absolute against the directory of whoever wrote them. */
function resolvePaths(raw: Raw, base: string, home: string): void {
  const dataDir = getPath(raw, 'db.data_dir');
  if (typeof dataDir === 'string') setPath(raw, 'db.data_dir', resolveUserPath(dataDir, base, home));
  const toolPaths = getPath(raw, 'tools.paths');
  if (Array.isArray(toolPaths)) {
    setPath(
      raw,
      'tools.paths',
      (toolPaths as unknown[]).map((p) => (typeof p === 'string' ? resolveUserPath(p, base, home) : p)),
    );
  }
  const servers = getPath(raw, 'mcp.servers');
  if (isRecord(servers)) {
    for (const server of Object.values(servers)) {
      if (isRecord(server) && typeof server.cwd === 'string') server.cwd = resolveUserPath(server.cwd, base, home);
    }
  }
}

/** `mcpServers` of the project's `.mcp.json`, below the project's own config file. */
function mcpJsonLayer(opts: LoadConfigOptions): Layer | undefined {
  const display = displayPath(join(opts.cwd, MCP_JSON_FILE), opts.cwd, opts.home);
  const raw = readMcpJson(opts.cwd, display);
  if (raw === undefined) return undefined;
  const layer: Layer = { source: display, raw, label: (path) => `${display}: ${mcpJsonKey(path)}` };
  validate(layer);
  resolvePaths(raw, opts.cwd, opts.home);
  return layer;
}

/** `--mcp-config FILE`: its `mcpServers`, as a `.mcp.json` is read; the file must exist. */
function mcpConfigLayer(file: string, opts: LoadConfigOptions): Layer {
  const path = resolveUserPath(file, opts.cwd, opts.home);
  const display = `--mcp-config ${displayPath(path, opts.cwd, opts.home)}`;
  const raw = readMcpServersFile(path, display, false) ?? {};
  const layer: Layer = { source: display, raw, label: (key) => `${display}: ${mcpJsonKey(key)}` };
  validate(layer);
  resolvePaths(raw, dirname(path), opts.home);
  return layer;
}

/** Validates one layer; throws `config_invalid` naming it. */
function validate(layer: Layer): void {
  // Expanded in each layer, so a file's `sandbox: "workspace-write"` merges with a task's `{ network: true }`.
  if (layer.raw.sandbox !== undefined) layer.raw.sandbox = expandSandboxShorthand(layer.raw.sandbox);
  const result = NaviConfigSchema.safeParse(layer.raw);
  if (result.success) return;
  const problems = problemsFrom(result.error.issues, layer.raw, NaviConfigSchema);
  throw new InvalidInputError('config_invalid', formatProblems(problems, layer.label));
}

/** Unknown top-level keys named in the warning; the rest are counted. */
const MAX_UNKNOWN_KEYS_SHOWN = 10;

/** Reads a config file into a layer (undefined when optional and absent), warning about unknown top-level keys. */
function fileLayer(path: string, display: string, optional: boolean, home: string, warnings: string[]): Layer | undefined {
  const parsed = readJsonFile(path, display, 'config_invalid', optional);
  if (parsed === undefined) return undefined;
  if (!isRecord(parsed)) {
    const got = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed;
    throw new InvalidInputError('config_invalid', `${display}: must be a JSON object ({ ... }), got ${got}`);
  }
  const raw: Raw = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (CONFIG_KEYS.includes(key)) raw[key] = value;
    else unknown.push(key);
  }
  if (unknown.length > 0) {
    // Keys as written could hold a newline or an ESC, or be megabytes long (or 50 000 of them):
    // the warning stays one short, harmless line.
    const shown = unknown.slice(0, MAX_UNKNOWN_KEYS_SHOWN).map((k) => printable(k.length > 60 ? `${k.slice(0, 59)}…` : k));
    const more = unknown.length - shown.length;
    warnings.push(`${display}: ignoring unknown key${unknown.length === 1 ? '' : 's'} ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`);
  }
  const layer: Layer = { source: display, raw, label: display };
  validate(layer);
  resolvePaths(raw, dirname(path), home);
  return layer;
}

/** The project file: `--config FILE`, else `./.nav-config.json`, else navigator's `./.agent/.nav-config.json`. */
function projectLayer(opts: LoadConfigOptions, warnings: string[]): Layer | undefined {
  const show = (p: string): string => displayPath(p, opts.cwd, opts.home);
  if (opts.configFile !== undefined) {
    const path = resolveUserPath(opts.configFile, opts.cwd, opts.home);
    return fileLayer(path, show(path), false, opts.home, warnings);
  }
  // A repository the operator does not trust (project-files.ts): its config is not read.
  if (projectFilesIgnored(opts.env)) return undefined;
  for (const path of [join(opts.cwd, '.nav-config.json'), join(opts.cwd, '.agent', '.nav-config.json')]) {
    const layer = fileLayer(path, show(path), true, opts.home, warnings);
    if (layer) return layer;
  }
  return undefined;
}

/**
 * `$XDG_CONFIG_HOME/navi/config.json`, else `~/.config/navi/config.json` (only an absolute
 * XDG_CONFIG_HOME counts, per the XDG spec). Undefined without a usable home: a relative path
 * would silently read a file from wherever navi was started.
 */
export function userConfigPath(env: Record<string, string | undefined>, home: string): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'navi', 'config.json');
  return isAbsolute(home) ? join(home, '.config', 'navi', 'config.json') : undefined;
}

function envLayers(env: Record<string, string | undefined>, cwd: string, home: string): Layer[] {
  const layers: Layer[] = [];
  for (const [name, key, numeric] of ENV_KEYS) {
    const value = env[name]?.trim();
    // An empty variable is how shells unset things (`OLLAMA_HOST= navi …`): treat it as absent.
    if (value === undefined || value === '') continue;
    // A numeric variable that does not parse stays a string, so the schema rejects it with the allowed range.
    const asNumber = numeric && /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(value) ? Number(value) : value;
    const raw: Raw = {};
    setPath(raw, key, asNumber);
    const layer: Layer = { source: `env ${name}`, raw, label: () => `environment variable ${name}` };
    validate(layer);
    resolvePaths(raw, cwd, home);
    layers.push(layer);
  }
  return layers;
}

function flagLayers(flags: ConfigFlags): Layer[] {
  const layers: Layer[] = [];
  for (const { flag, key, value } of flags) {
    if (value === undefined) continue;
    const raw: Raw = {};
    setPath(raw, key, value);
    const layer: Layer = { source: flag, raw, label: () => flag };
    validate(layer);
    layers.push(layer);
  }
  return layers;
}

function overrideLayer(o: LoopOverride): Layer {
  const target = o.target ?? 'loop_mode';
  const label = (path: string): string => `${o.source}: ${path.replace(new RegExp(`^${target}`), o.key)}`;
  const layer: Layer = { source: o.source, raw: { [target]: o.values }, label };
  validate(layer);
  return layer;
}

/**
 * Loads, validates and merges the configuration. Throws InvalidInputError (`config_invalid`,
 * exit 2) with one line naming the file/variable/flag, the key, what is allowed and what was
 * given; invalid JSON names line and column.
 */
export function loadConfig(opts: LoadConfigOptions): LoadedConfig {
  const warnings: string[] = [];
  const layers: Layer[] = [];
  const userPath = userConfigPath(opts.env, opts.home);
  const user =
    userPath === undefined
      ? undefined
      : fileLayer(userPath, displayPath(userPath, opts.cwd, opts.home), true, opts.home, warnings);
  if (user) layers.push(user);
  const ignoreProject = projectFilesIgnored(opts.env);
  if (ignoreProject) {
    const present = presentProjectFiles(opts.cwd);
    if (present.length > 0) warnings.push(ignoredWarning(present));
  }
  const mcpJson = ignoreProject ? undefined : mcpJsonLayer(opts);
  if (mcpJson) layers.push(mcpJson);
  const project = projectLayer(opts, warnings);
  if (project && project.source !== user?.source) layers.push(project);
  for (const file of opts.mcpConfigFiles ?? []) layers.push(mcpConfigLayer(file, opts));
  layers.push(...(opts.loopOverrides ?? []).filter((o) => o.values !== undefined).map(overrideLayer));
  layers.push(...envLayers(opts.env, opts.cwd, opts.home));
  layers.push(...flagLayers(opts.flags ?? []));

  const merged = layers.reduce<Raw>((acc, layer) => deepMerge(acc, layer.raw), {});
  const result = NaviConfigSchema.safeParse(merged);
  if (!result.success) {
    // Each layer passed alone, so only a combination can fail here; name the merged result.
    const problems = problemsFrom(result.error.issues, merged, NaviConfigSchema);
    throw new InvalidInputError('config_invalid', formatProblems(problems, 'configuration'));
  }
  const config = result.data;
  // The operator's floor (floor.ts): nothing below it in any layer lowers the run's sandbox.
  const floor = parseFloor(opts.env[SANDBOX_FLOOR_ENV]);
  if (typeof floor === 'string') throw new InvalidInputError('config_invalid', `environment variable ${floor}`);
  if (floor !== undefined) config.sandbox = applyFloor(config.sandbox, floor);

  const keys = new Set(layers.flatMap((layer) => leafPaths(layer.raw)));
  const loopMaxIterations = isMaxIterationsExplicit(layers.map((l) => l.raw.loop_mode));
  const explicit: ConfigExplicit = { keys, loopMaxIterations };
  if (config.loop_mode.never_pause_on_stagnation) {
    const setter = [...layers].reverse().find((l) => getPath(l.raw, 'loop_mode.never_pause_on_stagnation') !== undefined);
    const label = setter?.label ?? 'configuration';
    const where = typeof label === 'string' ? `${label}: loop_mode` : label('loop_mode');
    assertLoopSafety(config.loop_mode, loopMaxIterations, where);
  }
  return { config, warnings, sources: layers.map((l) => l.source), explicit };
}

import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { load as loadYaml } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/config/duration.js';
import { loadConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { loadProfiles } from '../../src/profiles/load.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

describe('the example .nav-config.json at the repo root', () => {
  it('is valid, warns about nothing, and spells out seed 004 loop_mode and the llm defaults (those whose default differs from a set value left out)', () => {
    const raw = JSON.parse(readFileSync(join(REPO, '.nav-config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    expect(Object.keys(raw.loop_mode ?? {}).sort()).toEqual(Object.keys(defaultConfig().loop_mode).sort());
    // Left unset: num_ctx so navi can lower it to the model's trained context length; think so
    // a model that cannot think is not warned about; the silence limits so they stay liveness
    // checks instead of hard limits (SPEC §13).
    const { num_ctx: _auto, think: _think, first_chunk_timeout_s: _first, chunk_timeout_s: _chunk, ...llmDefaults } = defaultConfig().llm;
    expect(raw.llm).toEqual(llmDefaults);
    const r = loadConfig({ cwd: REPO, home: join(tmpdir(), 'navi-no-home'), env: {} });
    expect(r.warnings).toEqual([]);
    expect(r.sources).toEqual(['.nav-config.json']);
    expect(r.config).toEqual(defaultConfig());
  });
});

/** SPEC §6 task file keys. */
const TASK_KEYS = ['name', 'prompt', 'profile', 'cwd', 'loop_mode', 'loop', 'checks', 'ticket', 'budget'];

describe('example tasks follow SPEC §6', () => {
  const dir = join(REPO, 'tasks');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  const profiles = loadProfiles();

  it('ships the three examples', () => {
    expect(files.sort()).toEqual(['fix-failing-tests.yaml', 'refactor-with-checks.yaml', 'write-doc.yaml']);
  });

  it.each(files)('%s', (file) => {
    const task = loadYaml(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>;
    for (const key of Object.keys(task)) expect(TASK_KEYS, `unknown key ${key}`).toContain(key);
    expect(task.name).toBe(file.replace(/\.yaml$/, ''));
    expect(typeof task.prompt).toBe('string');
    expect(profiles.profiles.has(task.profile as string)).toBe(true);
    expect(task.loop_mode).toBe(true);
    // The loop block overrides .nav-config.json's loop_mode: same keys, same ranges, same guard.
    const r = loadConfig({
      cwd: join(tmpdir(), 'navi-no-project'),
      home: join(tmpdir(), 'navi-no-home'),
      env: {},
      loopOverrides: [{ source: file, key: 'loop', values: task.loop }],
    });
    expect(r.config.loop_mode.max_iterations).toBe((task.loop as { max_iterations: number }).max_iterations);
    const checks = task.checks as Array<Record<string, unknown>>;
    expect(checks.length).toBeGreaterThan(0);
    for (const check of checks) {
      expect(Object.keys(check).sort()).toEqual(['name', 'run', 'timeout_s']);
      expect(typeof check.run).toBe('string');
    }
    const budget = task.budget as { max_tokens: number; deadline: string };
    expect(Number.isInteger(budget.max_tokens)).toBe(true);
    expect(parseDuration(budget.deadline)).toBeGreaterThan(0);
  });
});

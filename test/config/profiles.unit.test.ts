import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidInputError, NotFoundError } from '../../src/errors.js';
import {
  getProfile,
  loadProfiles,
  normalizePrompt,
  projectProfilesDir,
  shippedProfilesDir,
  systemPromptFor,
} from '../../src/profiles/load.js';
import { DEFAULT_AGENT_TOOLS } from '../../src/profiles/schema.js';
import { scratch, thrown, type Scratch } from './helpers.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

let s: Scratch;
let cwd: string;
beforeEach(() => {
  s = scratch();
  cwd = s.root;
});
afterEach(() => s.cleanup());

function project() {
  return loadProfiles({ projectDir: projectProfilesDir(cwd) });
}

/**
 * Why the project's profile `p` (or its persona) does not load. A broken profile fails where it
 * is used (issue 18 item 12): loading keeps it aside, getProfile throws with its problem.
 */
function profileError(): string {
  let set: ReturnType<typeof project> | undefined;
  try {
    set = project();
  } catch {
    // The persona is every profile's: it still fails the load.
  }
  const loaded = set;
  const err = loaded === undefined ? thrown(project) : thrown(() => getProfile(loaded, 'p'));
  if (set !== undefined) {
    expect(set.profiles.has('p')).toBe(false);
    expect(err.message).toBe(`profile 'p' cannot be used: ${set.broken?.get('p') ?? ''}`);
  }
  expect(err).toBeInstanceOf(InvalidInputError);
  expect(err.code).toBe('profile_invalid');
  expect(err.exitCode).toBe(2);
  expect(err.message).not.toContain('\n');
  return set?.broken?.get('p') ?? err.message;
}

describe('shipped profiles', () => {
  it('are found from the module location (src/profiles and dist/profiles both resolve to <repo>/profiles)', () => {
    expect(shippedProfilesDir()).toBe(join(REPO, 'profiles'));
    // The built module sits at dist/profiles/load.js: the same relative URL lands on the same folder.
    expect(fileURLToPath(new URL('../../profiles/', `file://${REPO}/dist/profiles/load.js`))).toBe(`${join(REPO, 'profiles')}/`);
  });

  it('default, coder and researcher load with seed 000 flags', () => {
    const set = loadProfiles();
    expect([...set.profiles.keys()].sort()).toEqual(['coder', 'default', 'researcher']);
    for (const p of set.profiles.values()) {
      expect(p.source).toBe('shipped');
      expect(p.prompt.length).toBeGreaterThan(100);
      expect(p.settings.description).not.toBe('');
      expect(p.settings).toMatchObject({
        think_enabled: true,
        planning_enabled: true,
        iteration_budget_enabled: true,
        goal_anchoring_enabled: true,
        goal_anchoring_interval: 5,
        anti_stall_enabled: true,
        anti_stall_threshold: 8,
        step_validation_enabled: false,
        subagent_planning_enabled: false,
        memory_extraction_enabled: false,
      });
      // Sub-agents do not spawn sub-agents of their own: nesting stays one level deep.
      expect(p.settings.tools.subagent).not.toContain('spawn_agent');
      // Every tool a profile's prompt relies on is one it has.
      for (const tool of p.settings.tools.agent) expect(DEFAULT_AGENT_TOOLS).toContain(tool);
    }
    expect(set.persona).toMatch(/navi/);
    expect(set.personaFile).toBe(join(REPO, 'profiles', 'persona.txt'));
  });

  it('default has the general tool set; researcher is read-only', () => {
    const set = loadProfiles();
    expect(getProfile(set, 'default').settings.tools.agent).toEqual([...DEFAULT_AGENT_TOOLS]);
    expect(getProfile(set, 'coder').settings.tools.agent).toEqual([...DEFAULT_AGENT_TOOLS]);
    const researcher = getProfile(set, 'researcher').settings.tools;
    expect(researcher.agent).toEqual(['read_file', 'list_dir', 'search_files', 'todo', 'scratchpad', 'plan', 'spawn_agent']);
    for (const w of ['write_file', 'edit_file', 'shell']) {
      expect(researcher.agent).not.toContain(w);
      expect(researcher.subagent).not.toContain(w);
    }
  });

  it('prompts name only tools their profile has', () => {
    const set = loadProfiles();
    const all = ['read_file', 'write_file', 'edit_file', 'list_dir', 'search_files', 'shell', 'todo', 'scratchpad', 'plan', 'spawn_agent'];
    for (const p of set.profiles.values()) {
      for (const tool of all) {
        if (new RegExp(`\\b${tool}\\b`).test(p.prompt)) expect(p.settings.tools.agent, `${p.id} mentions ${tool}`).toContain(tool);
      }
    }
  });

  it('size budget: persona + "\\n---\\n" + default prompt ≤ 2,000 bytes (local models prefill every byte)', () => {
    const set = loadProfiles();
    const prompt = systemPromptFor(set, 'default');
    expect(Buffer.byteLength(prompt, 'utf8')).toBeLessThanOrEqual(2000);
    for (const id of ['coder', 'researcher']) expect(Buffer.byteLength(systemPromptFor(set, id))).toBeLessThanOrEqual(2000);
  });

  it('running inside navi’s own checkout does not load the shipped folder twice as a project', () => {
    const set = loadProfiles({ projectDir: join(REPO, 'profiles') });
    expect([...set.profiles.values()].every((p) => p.source === 'shipped')).toBe(true);
  });
});

describe('project profiles', () => {
  it('a missing project folder means shipped only', () => {
    expect([...project().profiles.keys()].sort()).toEqual(['coder', 'default', 'researcher']);
  });

  it('override a shipped profile by id and add new ones', () => {
    s.write('profiles/coder/config.json', { description: 'our coder', max_iterations: 12, tools: { agent: ['read_file'] } });
    s.write('profiles/coder/system_prompt.txt', 'Use our conventions.\n');
    s.write('profiles/reviewer/config.json', {});
    s.write('profiles/reviewer/system_prompt.txt', 'Review diffs.');
    const set = project();
    const coder = getProfile(set, 'coder');
    expect(coder).toMatchObject({ id: 'coder', source: 'project', prompt: 'Use our conventions.', dir: join(cwd, 'profiles', 'coder') });
    expect(coder.settings).toMatchObject({ description: 'our coder', max_iterations: 12, tools: { agent: ['read_file'], subagent: [] } });
    const reviewer = getProfile(set, 'reviewer');
    expect(reviewer.source).toBe('project');
    // An empty config.json gets every seed 000 default and the general tool set.
    expect(reviewer.settings).toEqual({
      description: '',
      think_enabled: true,
      planning_enabled: true,
      iteration_budget_enabled: true,
      goal_anchoring_enabled: true,
      goal_anchoring_interval: 5,
      anti_stall_enabled: true,
      anti_stall_threshold: 8,
      step_validation_enabled: false,
      subagent_planning_enabled: false,
      memory_extraction_enabled: false,
      user_tools_enabled: true,
      max_iterations: 40,
      tools: { agent: [...DEFAULT_AGENT_TOOLS], subagent: [] },
    });
    expect(getProfile(set, 'default').source).toBe('shipped');
  });

  it('profiles/persona.txt replaces the persona', () => {
    s.write('profiles/persona.txt', 'You are Bob.\r\n\r\n');
    const set = project();
    expect(set.persona).toBe('You are Bob.');
    expect(set.personaFile).toBe(join(cwd, 'profiles', 'persona.txt'));
    expect(systemPromptFor(set, 'default').startsWith('You are Bob.\n---\n')).toBe(true);
  });

  it('directories that are not profiles (no config.json, no system_prompt.txt) are left alone', () => {
    s.write('profiles/avatars/alice.png', 'x');
    s.write('profiles/README.md', 'ours');
    expect([...project().profiles.keys()].sort()).toEqual(['coder', 'default', 'researcher']);
  });
});

describe('bad profiles name the file and key', () => {
  it.each([
    ['unknown key', { thinking: true }, 'profiles/p/config.json: thinking: unknown key (allowed: description, model,'],
    ['unknown nested key', { tools: { main: [] } }, 'profiles/p/config.json: tools.main: unknown key (allowed: agent, subagent, mcp)'],
    ['bad max_iterations', { max_iterations: 0 }, 'profiles/p/config.json: max_iterations: must be an integer between 1 and 500 (got 0)'],
    ['bad flag type', { think_enabled: 'no' }, 'profiles/p/config.json: think_enabled: must be true or false (got "no")'],
    ['bad interval', { goal_anchoring_interval: 0 }, 'profiles/p/config.json: goal_anchoring_interval: must be a positive integer (got 0)'],
    ['bad temperature', { temperature: -1 }, 'profiles/p/config.json: temperature: must be a number between 0 and 2 (got -1)'],
    ['tools not a list', { tools: { agent: 'shell' } }, 'profiles/p/config.json: tools.agent: must be an array of tool names (got "shell")'],
    ['not an object', [1], 'profiles/p/config.json: must be an object with keys description,'],
    ['missing compression prompt', { compression_prompt_file: 'c.txt' }, 'profiles/p/config.json: compression_prompt_file: file not found (got "c.txt")'],
  ])('%s', (_name, config, want) => {
    s.write('profiles/p/config.json', config);
    s.write('profiles/p/system_prompt.txt', 'Prompt.');
    expect(profileError()).toContain(want);
  });

  it('invalid JSON names line and column', () => {
    s.write('profiles/p/config.json', '{\n  "max_iterations": 5,\n}');
    s.write('profiles/p/system_prompt.txt', 'Prompt.');
    expect(profileError()).toBe('profiles/p/config.json:3:1: invalid JSON: Expected double-quoted property name');
  });

  it.each([
    ['missing', undefined, 'profiles/p/system_prompt.txt: file not found'],
    ['empty', ' \n\t\n', "profiles/p/system_prompt.txt: is empty; write the profile's instructions in it"],
  ])('%s system_prompt.txt', (_name, prompt, want) => {
    s.write('profiles/p/config.json', {});
    if (prompt !== undefined) s.write('profiles/p/system_prompt.txt', prompt);
    expect(profileError()).toBe(want);
  });

  it('a prompt without config.json', () => {
    s.write('profiles/p/system_prompt.txt', 'Prompt.');
    expect(profileError()).toBe('profiles/p/config.json: file not found');
  });

  it('an empty project persona', () => {
    s.write('profiles/persona.txt', '\n');
    expect(profileError()).toBe("profiles/persona.txt: is empty; write the profile's instructions in it");
  });
});

describe('systemPromptFor', () => {
  it('is persona + "\\n---\\n" + prompt, trailing whitespace trimmed from each part', () => {
    s.write('profiles/p/config.json', {});
    s.write('profiles/p/system_prompt.txt', '\uFEFFLine one.\r\nLine two.  \n\n');
    s.write('profiles/persona.txt', 'Persona.\n\n');
    const set = project();
    expect(systemPromptFor(set, 'p')).toBe('Persona.\n---\nLine one.\nLine two.');
    expect(systemPromptFor(set, getProfile(set, 'p'))).toBe('Persona.\n---\nLine one.\nLine two.');
  });

  it('is byte-identical across loads and matches the shipped files', () => {
    const a = systemPromptFor(loadProfiles(), 'coder');
    const b = systemPromptFor(loadProfiles(), 'coder');
    expect(a).toBe(b);
    const persona = readFileSync(join(REPO, 'profiles', 'persona.txt'), 'utf8');
    const coder = readFileSync(join(REPO, 'profiles', 'coder', 'system_prompt.txt'), 'utf8');
    expect(a).toBe(`${normalizePrompt(persona)}\n---\n${normalizePrompt(coder)}`);
  });

  it('trims parts of a hand-built set the same way', () => {
    const set = loadProfiles();
    const p = { ...getProfile(set, 'default'), prompt: 'Do it.\n\n' };
    expect(systemPromptFor({ ...set, persona: 'P.  \n' }, p)).toBe('P.\n---\nDo it.');
  });

  it('an unknown id is a NotFoundError listing the profiles', () => {
    const err = thrown(() => systemPromptFor(loadProfiles(), 'nope'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err.code).toBe('profile_not_found');
    expect(err.message).toBe('unknown profile "nope" (available: coder, default, researcher)');
  });
});

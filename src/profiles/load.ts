/**
 * Loading profiles (SPEC §2): the ones shipped with navi (`profiles/` at its package root),
 * then a `profiles/` folder in the working directory, which adds profiles or replaces shipped
 * ones by id and may replace the persona. Reads a handful of small files synchronously and
 * needs neither a database nor a model (`navi profiles list`).
 */

import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { formatProblems, problemsFrom } from '../config/issues.js';
import { readJsonFile } from '../config/json-file.js';
import { MAX_PROMPT_FILE_BYTES, readUserFile } from '../config/read-user-file.js';
import { InvalidInputError, NotFoundError, printable } from '../errors.js';
import { packagePath } from '../package-root.js';
import { errnoCode } from '../util/guards.js';
import { ProfileSettingsSchema } from './schema.js';
import type { Profile, ProfileSet, ProfileSettings } from './types.js';

/** Separator between the persona and a profile's prompt (SPEC §2). */
export const PERSONA_SEPARATOR = '\n---\n';

/** Inputs of loadProfiles. */
export interface LoadProfilesOptions {
  /** navi's own profiles directory; defaults to shippedProfilesDir(). */
  shippedDir?: string;
  /** The project's profiles directory (usually `<cwd>/profiles`); absent or missing → shipped only. */
  projectDir?: string;
}

/** navi's shipped `profiles/` directory (at the package root). */
export function shippedProfilesDir(): string {
  return packagePath('profiles');
}

/** Prompt text as stored: no byte-order mark, LF line ends, no trailing whitespace (byte-stable prefix). */
export function normalizePrompt(raw: string): string {
  return raw.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').trimEnd();
}

function fail(message: string, cause?: unknown): never {
  throw new InvalidInputError('profile_invalid', message, cause === undefined ? undefined : { cause });
}

function readPrompt(path: string, display: string): string {
  // A regular file of reasonable size only: a profile folder from a cloned repository may hold
  // a FIFO or a symlink to a device.
  const raw = readUserFile(path, { display, code: 'profile_invalid', maxBytes: MAX_PROMPT_FILE_BYTES, kind: 'prompt files' });
  const prompt = normalizePrompt(raw);
  if (prompt === '') fail(`${display}: is empty; write the profile's instructions in it`);
  return prompt;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Loads one profile directory; `display` is how its directory is named in messages. */
function loadProfile(dir: string, id: string, source: Profile['source'], display: string): Profile {
  const configDisplay = `${display}/config.json`;
  const parsed = readJsonFile(join(dir, 'config.json'), configDisplay, 'profile_invalid');
  const result = ProfileSettingsSchema.safeParse(parsed);
  if (!result.success) {
    const problems = problemsFrom(result.error.issues, parsed, ProfileSettingsSchema);
    fail(formatProblems(problems, configDisplay));
  }
  const settings: ProfileSettings = result.data;
  if (settings.compression_prompt_file !== undefined && !existsSync(resolve(dir, settings.compression_prompt_file))) {
    fail(`${configDisplay}: compression_prompt_file: file not found (got ${printable(JSON.stringify(settings.compression_prompt_file))})`);
  }
  const prompt = readPrompt(join(dir, 'system_prompt.txt'), `${display}/system_prompt.txt`);
  return { id, dir, source, settings, prompt };
}

/**
 * Profiles in `root`, by id, in name order. A subdirectory is a profile when it holds a
 * config.json or a system_prompt.txt (then it must hold both); other directories are left
 * alone, since a project's `profiles/` folder may well be its own business.
 */
function loadProfilesIn(root: string, source: Profile['source'], displayRoot: string, broken?: Map<string, string>): Map<string, Profile> {
  const out = new Map<string, Profile>();
  let names: string[];
  try {
    names = readdirSync(root).sort();
  } catch (err) {
    fail(`${displayRoot}: cannot be read (${errnoCode(err) ?? String(err)})`, err);
  }
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const dir = join(root, name);
    if (!isDirectory(dir)) continue;
    if (!existsSync(join(dir, 'config.json')) && !existsSync(join(dir, 'system_prompt.txt'))) continue;
    // The folder name is the user's (or a cloned repository's): escaped in every message.
    const display = `${displayRoot}/${printable(name)}`;
    if (broken === undefined) {
      out.set(name, loadProfile(dir, name, source, display));
      continue;
    }
    // A project profile is checked when it is used: a broken one nobody runs blocks nothing.
    try {
      out.set(name, loadProfile(dir, name, source, display));
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      broken.set(name, err.message);
    }
  }
  return out;
}

function sameDirectory(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/**
 * Shipped profiles plus the project's. A shipped profile or a persona that does not load throws
 * InvalidInputError (`profile_invalid`, exit 2) naming the file for a missing or empty prompt,
 * invalid JSON (line:column) or a bad key; a project profile that does not load is kept in
 * `broken` with that message, and fails only where it is used (`getProfile`).
 */
export function loadProfiles(opts: LoadProfilesOptions = {}): ProfileSet {
  const shippedDir = opts.shippedDir ?? shippedProfilesDir();
  // Shipped files are named by absolute path: an error there is an installation problem.
  let personaFile = join(shippedDir, 'persona.txt');
  let persona = readPrompt(personaFile, personaFile);
  const profiles = loadProfilesIn(shippedDir, 'shipped', shippedDir);
  const projectDir = opts.projectDir;
  // Running navi inside its own checkout makes the project folder the shipped one: load it once.
  if (projectDir !== undefined && isDirectory(projectDir) && !sameDirectory(projectDir, shippedDir)) {
    // Project files are named as the user sees them from the working directory: `profiles/coder/…`.
    const displayRoot = basename(projectDir);
    const projectPersona = join(projectDir, 'persona.txt');
    if (existsSync(projectPersona)) {
      persona = readPrompt(projectPersona, `${printable(displayRoot)}/persona.txt`);
      personaFile = projectPersona;
    }
    const broken = new Map<string, string>();
    for (const [id, profile] of loadProfilesIn(projectDir, 'project', printable(displayRoot), broken)) profiles.set(id, profile);
    // A broken project profile replaces a shipped one of its id too: running the shipped one instead would hide the mistake.
    for (const id of broken.keys()) profiles.delete(id);
    return { persona, personaFile, profiles, broken };
  }
  return { persona, personaFile, profiles };
}

/** The profile `id`, or NotFoundError (`profile_not_found`) listing the ones that exist. */
export function getProfile(set: ProfileSet, id: string): Profile {
  const profile = set.profiles.get(id);
  if (profile) return profile;
  const problem = set.broken?.get(id);
  if (problem !== undefined) throw new InvalidInputError('profile_invalid', `profile '${printable(id)}' cannot be used: ${problem}`);
  const known = [...set.profiles.keys()].sort().join(', ');
  throw new NotFoundError('profile_not_found', `unknown profile "${printable(id)}" (available: ${printable(known) || 'none'})`);
}

/**
 * The system prompt for a profile: persona + "\n---\n" + profile prompt, each part without
 * trailing whitespace. Identical bytes for identical files, so Ollama's prefix cache holds.
 */
export function systemPromptFor(set: ProfileSet, profile: Profile | string): string {
  const p = typeof profile === 'string' ? getProfile(set, profile) : profile;
  return composeSystemPrompt(set.persona, p.prompt);
}

/** persona + "\n---\n" + prompt, both normalised: the one rule for every system prompt. */
export function composeSystemPrompt(persona: string, prompt: string): string {
  return `${normalizePrompt(persona)}${PERSONA_SEPARATOR}${normalizePrompt(prompt)}`;
}

/** Where the working directory's profiles live (`<cwd>/profiles`). */
export function projectProfilesDir(cwd: string): string {
  return join(cwd, 'profiles');
}

/** `navi profiles list|show`: no database, no model. */
import type { CliHost } from '../host.js';
import { InvalidInputError, NotFoundError, printable } from '../../errors.js';
import { systemPromptFor } from '../../profiles/load.js';
import { findProjectInstructions } from '../../profiles/project-instructions.js';
import { toolsForProfile, unknownProfileTools } from '../../agent/agent.js';
import type { GlobalArgs } from '../global-args.js';
import { configuredSandbox, profilesFor, setup, toolsFor } from '../setup.js';

type Args = GlobalArgs & Record<string, unknown>;

export async function profilesList(argv: Args, host: CliHost): Promise<number> {
  const { cwd, config, host: { env } } = setup(argv, host);
  const set = await profilesFor(cwd, env);
  const rows = [...set.profiles.values()].sort((a, b) => a.id.localeCompare(b.id));
  const broken = [...(set.broken ?? new Map<string, string>()).entries()].sort(([a], [b]) => a.localeCompare(b));
  if (argv.output !== 'text') {
    host.stdout.write(
      `${JSON.stringify({
        default_profile: config.default_profile,
        profiles: [
          ...rows.map((p) => ({ id: p.id, source: p.source, description: p.settings.description, tools: p.settings.tools.agent, valid: true })),
          ...broken.map(([id, problem]) => ({ id, source: 'project', valid: false, problem })),
        ],
      })}\n`,
    );
    return 0;
  }
  const width = Math.max(...rows.map((p) => p.id.length), ...broken.map(([id]) => id.length), 2);
  for (const p of rows) {
    const mark = p.id === config.default_profile ? '*' : ' ';
    host.stdout.write(`${mark} ${p.id.padEnd(width)}  ${p.source.padEnd(7)}  ${p.settings.description}\n`);
  }
  for (const [id, problem] of broken) host.stdout.write(`! ${printable(id).padEnd(width)}  project  broken: ${problem}\n`);
  host.stdout.write(`\n* default profile${broken.length > 0 ? '; ! broken (fails when used)' : ''}. Details: navi profiles show ID\n`);
  return 0;
}

export async function profilesShow(argv: Args, host: CliHost): Promise<number> {
  const { cwd, config, host: { env } } = setup(argv, host);
  const set = await profilesFor(cwd, env);
  const id = String(argv.id);
  const profile = set.profiles.get(id);
  const problem = set.broken?.get(id);
  if (!profile && problem !== undefined) throw new InvalidInputError('profile_invalid', `profile '${id}' cannot be used: ${problem}`);
  if (!profile) throw new NotFoundError('profile_not_found', `unknown profile '${id}'; available: ${[...set.profiles.keys()].join(', ')}`);
  const { registry, userTools } = await toolsFor(cwd, env, config, false, [], await configuredSandbox(config, cwd, env));
  const tools = toolsForProfile(profile, (n) => registry.has(n), false, userTools);
  const unknown = unknownProfileTools(profile, (n) => registry.has(n));
  // What a run here would add after the profile's prompt (runtime.ts systemAppendix).
  const instructions = argv.projectInstructions === false ? null : findProjectInstructions(cwd);
  const prompt = instructions?.text ? `${systemPromptFor(set, profile)}\n\n${instructions.text}` : systemPromptFor(set, profile);
  const model = profile.settings.model ?? config.llm.model;
  const instructionFiles = (instructions?.files ?? []).map((f) => ({ path: f.path, name: f.name, bytes: f.bytes, used_bytes: f.used }));
  if (argv.output !== 'text') {
    host.stdout.write(
      `${JSON.stringify({
        id: profile.id,
        source: profile.source,
        dir: profile.dir,
        model,
        settings: profile.settings,
        tools,
        unknown_tools: unknown,
        project_instructions: instructions === null ? null : { root: instructions.root, files: instructionFiles },
        system_prompt: prompt,
      })}\n`,
    );
    return 0;
  }
  const out: string[] = [
    `profile ${profile.id} (${profile.source}: ${profile.dir})`,
    profile.settings.description,
    '',
    `model: ${model}`,
    `tools: ${tools.join(', ') || '(none)'}`,
  ];
  if (unknown.length > 0) out.push(`unknown tools: ${unknown.join(', ')}`);
  const mcp = profile.settings.tools.mcp;
  const servers = Object.keys(config.mcp.servers);
  out.push(`mcp tools: ${mcp === undefined || mcp.includes('*') ? `every configured server's (${servers.join(', ') || 'none configured'})` : mcp.length === 0 ? 'none' : mcp.join(', ')}`);
  out.push('', 'settings:');
  for (const [k, v] of Object.entries(profile.settings)) {
    if (k === 'description' || k === 'tools') continue;
    out.push(`  ${k}: ${JSON.stringify(v)}`);
  }
  out.push('', 'project instructions:');
  if (instructions === null) out.push('  off (--no-project-instructions)');
  else if (instructionFiles.length === 0) out.push(`  none found (AGENTS.md, CLAUDE.md or GEMINI.md, from ${instructions.root ?? cwd} down to ${cwd})`);
  else for (const f of instructionFiles) out.push(`  ${f.path} (${f.bytes} bytes${f.used_bytes < f.bytes ? `, ${f.used_bytes} used: the cap is reached` : ''})`);
  out.push('', `system prompt (${Buffer.byteLength(prompt)} bytes):`, prompt);
  host.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

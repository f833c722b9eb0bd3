/** `navi mcp list|tools`: the configured MCP servers, started to ask them (no database, no model). */
import { commandHelp } from '../help-layout.js';
import { handledBy, subcommandsOnly, type NaviCommand } from './invocation.js';

const list: NaviCommand = {
  command: 'list',
  describe: 'Each configured server: transport, state, tool count, start time',
  builder: (y) =>
    commandHelp(y, {
      path: 'mcp list',
      uses: [],
      examples: [
        ['navi mcp list', 'servers from .nav-config.json, the user file and .mcp.json'],
        ['navi mcp list -o json', 'as JSON'],
      ],
    }),
  handler: handledBy('mcp list'),
};

const tools: NaviCommand = {
  command: 'tools [server]',
  describe: 'The tools the servers offer, named as the model sees them (mcp__<server>__<tool>)',
  builder: (y) =>
    commandHelp(y.positional('server', { type: 'string', describe: 'Only this server' }), {
      path: 'mcp tools',
      uses: [],
      examples: [
        ['navi mcp tools', 'every server'],
        ['navi mcp tools github -o json', "one server's tools with their schemas"],
      ],
    }),
  handler: handledBy('mcp tools'),
};

export const mcpModule: NaviCommand = {
  command: 'mcp',
  describe: 'MCP servers: their state and the tools they offer (starts them; no database, no model)',
  builder: (y) =>
    commandHelp(y, { path: 'mcp', uses: [], examples: [['navi mcp list', ''], ['navi mcp tools github', '']] })
      .command(list)
      .command(tools)
      .demandCommand(1, 'name an mcp subcommand: list, tools'),
  handler: subcommandsOnly,
};

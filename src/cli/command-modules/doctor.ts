/** `navi doctor`: checks config, database, Ollama, model, profiles, tools and MCP servers. */
import { commandHelp } from '../help-layout.js';
import { handledBy, type NaviCommand } from './invocation.js';

export const doctorModule: NaviCommand = {
  command: 'doctor',
  describe: 'Check config, database, Ollama, model, profiles, tools and MCP servers',
  builder: (y) =>
    commandHelp(y, {
      path: 'doctor',
      uses: ['db', 'ollama', 'profile'],
      examples: [
        ['navi doctor', ''],
        ['navi doctor -m llama3.1:8b -o json', 'another model; one JSON object'],
      ],
    }),
  handler: handledBy('doctor'),
};

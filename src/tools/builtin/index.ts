import type { ToolDefinition } from '../types.js';
import { editFileTool } from './edit-file.js';
import { listDirTool } from './list-dir.js';
import { readFileTool } from './read-file.js';
import { scratchpadTool } from './scratchpad.js';
import { searchFilesTool } from './search-files.js';
import { shellTool } from './shell.js';
import { todoTool } from './todo.js';
import { writeFileTool } from './write-file.js';

export { renderTodos } from './todo.js';

/**
 * The built-in tools whose names and arguments SPEC §8 fixes. The agent-level tools (`plan`,
 * `spawn_agent`, `switch_profile`, `remember`/`forget`, `loop_signal`) live with the agent.
 */
export function builtinTools(): ToolDefinition[] {
  return [
    readFileTool,
    writeFileTool,
    editFileTool,
    listDirTool,
    searchFilesTool,
    shellTool,
    todoTool,
    scratchpadTool,
  ];
}

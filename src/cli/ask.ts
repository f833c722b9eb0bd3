/**
 * Questions to a person at the terminal (interactive runs only; headless runs never ask).
 * Ctrl-C at a question stops the run like anywhere else.
 */
import { createInterface } from 'node:readline/promises';

/** Asks a yes/no question on stderr; empty answer → `defaultYes`. */
export async function askYesNo(question: string, defaultYes = true): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  rl.on('SIGINT', () => {
    rl.close();
    process.kill(process.pid, 'SIGINT');
  });
  try {
    const answer = (await rl.question(question)).trim().toLowerCase();
    if (answer === '') return defaultYes;
    return answer === 'y' || answer === 'yes';
  } catch {
    return false;
  } finally {
    rl.close();
  }
}

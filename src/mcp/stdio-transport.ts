/**
 * The stdio transport of an MCP server navi starts. The SDK's own `StdioClientTransport` spawns
 * the server as a plain child: a server started through a wrapper (`npx`, `uvx`, `sh -c`) leaves
 * its real process behind when only the wrapper is killed, and its stderr goes to navi's own.
 * This one speaks the same framing (the SDK's `ReadBuffer`/`serializeMessage`) but starts the
 * server in its own process group, kills the whole group on close and on navi's exit (like the
 * shell tool, SPEC §10: no orphans), and appends the server's stderr to a log file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import { finished } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, trackGroup, untrackGroup } from './process-groups.js';

/** A message larger than this is a broken server, not a result (the registry keeps 32 KiB of it anyway). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * After stdin closes, a well-behaved server exits at once (the MCP lifecycle's stdio shutdown);
 * one that does not gets SIGTERM, then SIGKILL. Short: navi's exit waits for it.
 */
const EXIT_AFTER_STDIN_MS = 300;
const KILL_GRACE_MS = 1000;

export interface StdioServerParams {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Where the server's stderr is appended (created with its directory). */
  logFile: string;
}

/** Why the process ended, for messages ("exited with code 1", "killed by SIGSEGV"). */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal !== null) return `killed by ${signal}`;
  return `exited with code ${String(code)}`;
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  private child: ChildProcess | undefined;
  private log: WriteStream | undefined;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  private exited: Promise<void> = Promise.resolve();
  /** How the process ended (undefined while it runs). */
  exit: string | undefined;

  constructor(private readonly params: StdioServerParams) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    const { params } = this;
    mkdirSync(dirname(params.logFile), { recursive: true });
    this.log = createWriteStream(params.logFile, { flags: 'a' });
    this.log.on('error', () => undefined);
    this.log.write(`--- ${new Date().toISOString()} ${params.command} ${params.args.join(' ')}\n`);
    return new Promise((resolve, reject) => {
      const child = spawn(params.command, [...params.args], {
        cwd: params.cwd,
        env: params.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      this.child = child;
      if (child.pid !== undefined) trackGroup(child.pid);
      this.exited = new Promise((done) => child.once('close', () => done()));
      child.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') err.message = `command not found: ${params.command} (not on PATH, or cwd ${params.cwd} missing)`;
        this.exit ??= `could not be started: ${err.message}`;
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.exit ??= describeExit(code, signal);
      });
      child.once('close', () => {
        if (child.pid !== undefined) {
          // Reap what the server left in its group (a wrapper's child), then forget the group.
          killGroup(child.pid, 'SIGKILL');
          untrackGroup(child.pid);
        }
        // Reported once the log is on disk: the crash message names the log, so what the server
        // said last must already be in it.
        const log = this.log;
        if (log === undefined) {
          this.onclose?.();
          return;
        }
        finished(log, () => this.onclose?.());
        log.end();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => {
        try {
          this.buffer.append(chunk);
        } catch (err) {
          this.onerror?.(err as Error);
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (err) {
            // A line that is not JSON-RPC (a server printing to stdout): say so, keep reading.
            this.onerror?.(err as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => this.log?.write(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed || this.exit !== undefined) {
        reject(new Error(`server is not running${this.exit !== undefined ? ` (${this.exit})` : ''}`));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes stdin, then SIGTERM and SIGKILL to the whole group if the server lingers. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const pid = child.pid;
    const wait = (ms: number): Promise<boolean> =>
      Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin?.end();
      if (!(await wait(EXIT_AFTER_STDIN_MS))) {
        killGroup(pid, 'SIGTERM');
        if (!(await wait(KILL_GRACE_MS))) {
          killGroup(pid, 'SIGKILL');
          child.stdout?.destroy();
          child.stderr?.destroy();
          await wait(KILL_GRACE_MS);
        }
      }
    }
    killGroup(pid, 'SIGKILL');
    this.buffer.clear();
  }
}

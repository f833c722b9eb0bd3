/**
 * A sandbox floor (issue 35): the least sandbox a run may have, set by whoever runs navi for
 * others (`navi worker --sandbox MODE` or its config). A job's flag, its task file and its
 * repository's config say what they want; the run gets the stricter of that and the floor, so
 * nothing that comes with a job lowers what the operator chose. Pure, table-tested.
 */
import { SANDBOX_MODES, type SandboxMode, type SandboxPolicy } from './modes.js';

/** The variable a worker sets for its `navi loop` children (and a user may set for any navi). */
export const SANDBOX_FLOOR_ENV = 'NAVI_SANDBOX_FLOOR';

/** off < workspace-write < read-only. */
const STRICTNESS: Readonly<Record<SandboxMode, number>> = { off: 0, 'workspace-write': 1, 'read-only': 2 };

/** The stricter of two modes. */
export function stricterMode(a: SandboxMode, b: SandboxMode): SandboxMode {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/**
 * `wanted`, raised to `floor`: the stricter mode, and the network only when both allow it. A
 * floor that is `off` has no say (not even about the network: without a sandbox there is no cut).
 */
export function applyFloor<P extends SandboxPolicy>(wanted: P, floor: SandboxPolicy): P {
  if (floor.mode === 'off') return { ...wanted };
  // The rest (the environment policy) is the operator's config: a floor says nothing about it.
  return { ...wanted, mode: stricterMode(wanted.mode, floor.mode), network: wanted.network && floor.network };
}

/** Whether `wanted` is below `floor` in any way (the floor would change it). */
export function isBelowFloor(wanted: SandboxPolicy, floor: SandboxPolicy): boolean {
  const raised = applyFloor(wanted, floor);
  return raised.mode !== wanted.mode || raised.network !== wanted.network;
}

/**
 * `NAVI_SANDBOX_FLOOR` as written: a mode (`workspace-write`: no network) or the config block
 * as JSON (`{"mode":"workspace-write","network":true}`). Undefined when unset or empty; a string
 * saying what is wrong otherwise (the caller makes it exit 2).
 */
export function parseFloor(raw: string | undefined): SandboxPolicy | string | undefined {
  const text = raw?.trim() ?? '';
  if (text === '') return undefined;
  const wrong = `${SANDBOX_FLOOR_ENV} must be a mode (${SANDBOX_MODES.join(', ')}) or {"mode": …, "network": true|false}`;
  if ((SANDBOX_MODES as readonly string[]).includes(text)) return { mode: text as SandboxMode, network: false };
  if (!text.startsWith('{')) return `${wrong} (got '${text.slice(0, 40)}')`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `${wrong} (got text that is not JSON)`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return wrong;
  const { mode, network, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || typeof mode !== 'string' || !(SANDBOX_MODES as readonly string[]).includes(mode)) return wrong;
  if (network !== undefined && typeof network !== 'boolean') return wrong;
  return { mode: mode as SandboxMode, network: network === true };
}

/** The floor as the variable's value (what a worker sets). */
export function formatFloor(floor: SandboxPolicy): string {
  return floor.network ? JSON.stringify({ mode: floor.mode, network: true }) : floor.mode;
}

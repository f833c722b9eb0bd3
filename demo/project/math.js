// Small arithmetic helpers used by the demo task.
export function add(a, b) {
  return a - b;
}

// The demo's test: prints one line and exits 1 when add() is wrong.
import { add } from './math.js';

const got = add(2, 3);
if (got !== 5) {
  console.log(`FAIL add(2, 3) = ${got}, expected 5`);
  process.exit(1);
}
console.log('ok add(2, 3) = 5');

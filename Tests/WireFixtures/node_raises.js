// Answers the hello and the reset, then logs 30 lines and dies of an uncaught TypeError
// thrown 12 calls deep at the next message: Node prints the source line, a caret, the
// error's message, its frames (10 by default) and its version, and the report must show
// the message, not only frames.
//   node node_raises.js
const readline = require('readline');

const apps = [];
function deep(n) {
  if (n === 0) return apps[0].disabled;   // TypeError: Cannot read properties of undefined
  return deep(n - 1);
}

let n = 0;
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  n += 1;
  if (n === 3) {
    for (let i = 0; i < 30; i++) process.stderr.write(`node_raises: log line ${i}\n`);
    deep(12);
  }
  process.stdout.write(JSON.stringify({ re: m.seq, protocol: 1, ok: true }) + '\n');
});

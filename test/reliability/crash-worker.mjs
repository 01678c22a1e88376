// A process of the crash tests, killed with SIGKILL at a random moment: `fanout` sends to
// everyone without end; `claim NAMES` reads (and so claims) those agents' repo-wide mail without end.
import { openBus } from '../../dist/index.js';

const [mode, arg] = process.argv.slice(2);
const bus = openBus(process.env);
process.stdout.write('ready\n');
for (let index = 0; ; index++) {
  if (mode === 'fanout') await bus.send({ from: 'crasher', to: '*', body: `fan-out ${process.pid} #${index}` });
  else for (const name of JSON.parse(arg)) await bus.readInbox({ reader: name, limit: 5, via: 'read_inbox' });
}

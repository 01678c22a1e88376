// A process of the crash tests, killed with SIGKILL at a random moment: `fanout` sends to
// everyone without end; `claim NAMES` reads (and so claims) those agents' repo-wide mail without end.
// It says it is ready after its first round, once connected and writing: the kill comes while it
// works, not while a loaded machine is still starting it (or, on PostgreSQL, still connecting).
import { openBus } from '../../dist/index.js';

const [mode, arg] = process.argv.slice(2);
const bus = openBus(process.env);
for (let index = 0; ; index++) {
  if (mode === 'fanout') await bus.mail.send({ from: 'crasher', to: '*', body: `fan-out ${process.pid} #${index}` });
  else for (const name of JSON.parse(arg)) await bus.inbox.read({ reader: name, limit: 5, via: 'read_inbox' });
  if (index === 0) process.stdout.write('ready\n');
}

// One worker of `npm run soak`: mixed load on the bus until killed. Each send it sees
// acknowledged is written to ACK_FILE at once (appended whole lines), so what a kill cuts short
// is only ever a send not yet acknowledged.
import { appendFileSync } from 'node:fs';
import { ChannelFullError, openBus } from '../dist/index.js';
import { randomFrom } from './seeded-random.mjs';

const [name, ackFile, seedText, agentsText] = process.argv.slice(2);
const agents = JSON.parse(agentsText);
const repos = [...new Set(agents.map((agent) => agent.split('/')[0]))];
const random = randomFrom(Number(seedText));
const pick = (list) => list[Math.floor(random() * list.length)];
const bus = openBus(process.env);
process.stdout.write('ready\n');
for (let index = 0; ; index++) {
  const draw = random();
  if (draw < 0.5) {
    const to = pick(agents);
    const result = await bus.mail.send({ from: name, to, body: `${name} #${index} to ${to}` });
    appendFileSync(ackFile, `send ${result.message_ids.join(' ')}\n`);
  } else if (draw < 0.65) {
    const result = await bus.mail.send({ from: name, to: pick(repos), body: `${name} #${index} to a repo` });
    appendFileSync(ackFile, `send ${result.message_ids.join(' ')}\n`);
  } else if (draw < 0.7) {
    const result = await bus.mail.send({ from: name, to: '*', body: `${name} #${index} to everyone` });
    appendFileSync(ackFile, `send ${result.message_ids.join(' ')}\n`);
  } else if (draw < 0.95) {
    const read = await bus.inbox.read({ reader: pick(agents), limit: 20 });
    appendFileSync(ackFile, `read ${read.length}\n`);
  } else {
    try {
      await bus.notices.publish({ severity: pick(['info', 'alert', 'critical']), message: `${name} notice #${index}`, ttl: 60, source: name });
      appendFileSync(ackFile, 'notice 1\n');
    } catch (error) {
      // A channel full of higher notices refuses a lower one: an answer, not a failure.
      if (!(error instanceof ChannelFullError)) throw error;
      appendFileSync(ackFile, 'refused 1\n');
    }
  }
}

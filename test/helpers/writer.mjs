// A separate writer process for concurrency tests: sends COUNT messages from
// FROM to TO through the built library, then prints the message ids it got.
import { openBus, registrationsFor } from '../../dist/index.js';

const [from, to, count] = process.argv.slice(2);
const bus = openBus(process.env);
const ids = [];
for (let index = 0; index < Number(count); index++) {
  const result = await bus.mail.send({ from, to, body: `${from} #${index}`, register: index === 0 ? registrationsFor(from, process.cwd(), true) : [] });
  ids.push(...result.message_ids);
}
await bus.close();
process.stdout.write(JSON.stringify(ids));

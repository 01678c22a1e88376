// One writer process of the reliability suite: COUNT sends from FROM, each picked by a seeded
// random draw among direct mail, repo-wide mail and mail to everyone. Prints, as JSON, what each
// send returned (its kind, message ids and recipients) so the test can account for every row.
import { openBus } from '../../dist/index.js';
import { randomFrom } from '../../scripts/seeded-random.mjs';

const [from, countText, seedText, targetsText] = process.argv.slice(2);
const targets = JSON.parse(targetsText);
const random = randomFrom(Number(seedText));
const pick = (list) => list[Math.floor(random() * list.length)];
const bus = openBus(process.env);
const sent = [];
for (let index = 0; index < Number(countText); index++) {
  const draw = random();
  const to = draw < 0.6 ? pick(targets.direct) : draw < 0.9 ? pick(targets.repos) : '*';
  const body = `${from} #${index} -> ${to}`;
  const result = await bus.mail.send({ from, to, body });
  sent.push({ body, to, kind: result.kind, ids: result.message_ids, recipients: result.recipients });
}
await bus.close();
process.stdout.write(JSON.stringify(sent));

// A reader process of the reliability suite: reads the inboxes of NAMES over and over (claiming
// repo-wide mail as it goes) until STOP_FILE exists and a last pass finds nothing, then prints
// what each name read: message ids, so the test can check each went to its own recipient.
import { existsSync } from 'node:fs';
import { openBus } from '../../dist/index.js';

const [namesText, stopFile] = process.argv.slice(2);
const names = JSON.parse(namesText);
const bus = openBus(process.env);
const read = Object.fromEntries(names.map((name) => [name, []]));
for (;;) {
  const stopping = existsSync(stopFile);
  let got = 0;
  for (const name of names) {
    const messages = await bus.inbox.read({ reader: name, limit: 500, via: 'read_inbox' });
    for (const message of messages) read[name].push({ id: message.message_id, claimed_by: message.claimed_by ?? null });
    got += messages.length;
  }
  if (stopping && got === 0) break;
  if (got === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
await bus.close();
process.stdout.write(JSON.stringify(read));

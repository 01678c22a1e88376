#!/usr/bin/env node
// A stand-in for a client the bus spawns: it prints its arguments and the name the bus gave it,
// then does what FAKE_AGENT says, one step after another (comma-separated):
//   sleep:MS      wait that long (a SIGTERM ends it at once, exit 143, unless ignore-term was a step)
//   ignore-term   keep running through SIGTERM (the stop's kill must end it)
//   done          close the task its prompt names through the real CLI, as the agent
//   say:TEXT      print TEXT
//   write:FILE    write FILE in the folder it runs in, saying where it ran
//   stamp         print the time it is about to go on (epoch milliseconds), for the fleet's benchmark
//   exit:CODE     exit with CODE (the last step; 0 when no step says)
// Its first line says when it started (epoch milliseconds), its second its own pid.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

const args = process.argv.slice(2);
const say = (line) => process.stdout.write(`${line}\n`);
say(`fake-agent started ${Date.now()}`);
say(`fake-agent pid ${process.pid}`);
say(`fake-agent args ${JSON.stringify(args)}`);
say(`fake-agent name ${process.env.AGENT_BUS_NAME ?? ''} depth ${process.env.AGENT_BUS_SPAWN_DEPTH ?? ''}`);
// As Claude Code's stream-json names its conversation (a resumed one keeps its id).
const resumed = args[args.indexOf('--resume') + 1];
say(JSON.stringify({ type: 'system', session_id: args.includes('--resume') ? resumed : `fake-session-${process.pid}` }));
let ignoreTerm = false;
process.on('SIGTERM', () => {
  if (ignoreTerm) return say('fake-agent ignores SIGTERM');
  say('fake-agent got SIGTERM');
  process.exit(143);
});
const prompt = args.find((arg) => arg.includes('agent-bus task')) ?? args.join(' ');
for (const step of (process.env.FAKE_AGENT ?? '').split(',').filter(Boolean)) {
  const [what, value = ''] = step.split(/:(.*)/s);
  if (what === 'sleep') await new Promise((resolve) => setTimeout(resolve, Number(value)));
  else if (what === 'ignore-term') ignoreTerm = true;
  else if (what === 'say') say(value);
  else if (what === 'write') writeFileSync(value, `written by ${process.env.AGENT_BUS_NAME} in ${process.cwd()}\n`);
  else if (what === 'stamp') say(`fake-agent stamp ${Date.now()}`);
  else if (what === 'done') {
    const id = /agent-bus task ([0-9a-f]+)/.exec(prompt)?.[1];
    const result = spawnSync(process.execPath, [process.env.FAKE_AGENT_CLI, 'task', 'done', id, '--result', 'all green'], { encoding: 'utf8' });
    say(`fake-agent done ${result.status} ${result.stderr.trim()}`);
  } else if (what === 'exit') process.exit(Number(value));
}

/** The roster as a table, one block per repo, sessions under their client: `agent-bus agents` and the chat's /agents. */
import { displayWidth, pad, padStyled, printable, singleLine } from './format.js';
import { when } from '../model/when.js';
import type { Style } from './style.js';
import type { AgentView } from '../core/views.js';
import { standingText } from './presence.js';

function shortPath(path: string, home: string): string {
  if (home !== '' && (path === home || path.startsWith(`${home}/`))) return singleLine(`~${path.slice(home.length)}`);
  return singleLine(path);
}

/** Where its turn stands and for how long (`working 3m`), and the task in its hands. */
function presence(agent: AgentView, now: number): string {
  // A session whose hooks have said nothing yet still shows whether its server runs.
  const state = agent.state === 'unknown' && agent.kind === 'session' && agent.live ? 'running' : agent.state;
  const text = standingText({ ...agent, state }, now);
  return text === '' ? '' : `${text}  `;
}

/** How it is woken, for people: `socket`, `watcher`, `watcher (socket given up: …)`, `codex queue`, `plugin`, `command`. */
export function wakeText(agent: AgentView): string | null {
  const { wake } = agent;
  if (wake === null) return null;
  if (wake.way === 'socket-refused') return `watcher (socket given up: ${singleLine(wake.note ?? 'no reason noted')})`;
  if (wake.way === 'queue') return `${agent.client ?? 'client'} queue`;
  return wake.way;
}

function details(agent: AgentView, now: number, you: string | undefined): string {
  const topic = agent.topic ? `  ${singleLine(agent.topic)}` : '';
  const wake = wakeText(agent);
  const cut = agent.server_gone === true ? '  (its server is gone: its hooks reach nothing)' : '';
  return `${presence(agent, now)}seen ${when(agent.last_seen, now)}${agent.name === you ? ' (you)' : ''}  pending=${agent.pending_count}${wake === null ? '' : `  wake=${wake}`}${cut}${topic}`;
}

/** The roster as text; `you` marks the reader's own entry. */
export function renderRoster(agents: AgentView[], style: Style, home: string, you?: string, now = Date.now()): string {
  if (agents.length === 0) return '(no agents registered yet)\n';
  const groups = new Map<string, AgentView[]>();
  for (const agent of agents) {
    const list = groups.get(agent.group);
    if (list) list.push(agent);
    else groups.set(agent.group, [agent]);
  }
  const indentOf = (agent: AgentView): number => (agent.kind === 'session' ? 4 : 2);
  const width = Math.max(20, ...agents.map((agent) => indentOf(agent) + displayWidth(printable(agent.name)) + 3));
  const lines: string[] = [];
  for (const group of [...groups.keys()].sort()) {
    const members = groups.get(group) ?? [];
    const only = members[0];
    if (members.length === 1 && only && only.name === group) {
      lines.push(`${padStyled(style.agent(only.name), only.name, width)}repo=${shortPath(only.repo_path, home)}  ${details(only, now, you)}`);
      continue;
    }
    const counted = members.filter((member) => member.kind !== 'session').length;
    const path = members[0] ? shortPath(members[0].repo_path, home) : '';
    lines.push(`${pad(printable(group), width)}repo=${path}  ${counted} agent${counted === 1 ? '' : 's'}`);
    for (const member of members) {
      const indent = ' '.repeat(indentOf(member));
      lines.push(`${indent}${padStyled(style.agent(member.name), member.name, width - indent.length)}${details(member, now, you)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

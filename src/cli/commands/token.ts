/** `agent-bus token create|list|revoke`: the hub's tokens, one per agent. */
import { parseDuration } from '../../model/duration.js';
import { isTokenId, parseScopes } from '../../core/tokens.js';
import { BusError } from '../../model/errors.js';
import type { TokenRecord } from '../../model/records.js';
import { setting } from '../../model/settings.js';
import { openBusHere } from '../../runtime.js';
import { UsageError } from '../args.js';
import { untilText, when } from '../../model/when.js';
import type { CommandRunner } from '../spec.js';
import { quoted } from '../../model/quote.js';

/** A token as `token list` shows it: everything but the hash of its secret. */
function listed(token: TokenRecord): Record<string, string | string[] | null> {
  return {
    id: token.tokenId,
    name: token.agent,
    repo: token.repoPath,
    scopes: token.scopes === '' ? [] : token.scopes.split(' '),
    created_at: token.createdAt,
    last_used_at: token.lastUsedAt,
    expires_at: token.expiresAt,
    revoked_at: token.revokedAt,
  };
}

/** Who made or revoked a token, for the audit log: this shell's name, else the operator. */
function actorOf(env: NodeJS.ProcessEnv): string {
  return setting(env, 'AGENT_BUS_NAME') || 'operator';
}

function state(token: TokenRecord, now: number): string {
  if (token.revokedAt !== null) return 'revoked';
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= now) return 'expired';
  return 'active';
}

export const run: CommandRunner = async (args, io) => {
  const [action, name, ...rest] = args.positionals;
  if (action !== 'create' && action !== 'list' && action !== 'revoke') {
    throw new UsageError(`token: expected create, list or revoke, got ${action === undefined ? 'nothing' : quoted(action)}. See 'agent-bus token --help'.`);
  }
  if (rest.length > 0) throw new UsageError(`token ${action}: unexpected argument ${quoted(rest[0])}`);
  if (action === 'list' && name !== undefined) throw new UsageError(`token list: unexpected argument ${quoted(name)}`);
  if (action !== 'list' && name === undefined) throw new UsageError(`token ${action}: give ${action === 'create' ? 'the agent NAME' : 'the agent NAME or a token ID'}`);
  if (action !== 'create') {
    for (const flag of ['repo', 'expires', 'scope']) if (args.values[flag] !== undefined) throw new UsageError(`token ${action}: --${flag} is for token create`);
  }
  const json = Boolean(args.values.json);
  // Everything is checked before the bus is opened: a mistake writes nothing.
  const expiresInMs = typeof args.values.expires === 'string' ? parseDuration(args.values.expires) : null;
  const scopes = parseScopes(typeof args.values.scope === 'string' ? [args.values.scope] : []);
  // Tokens belong to the store on this machine (the hub's), whatever hub this machine talks to.
  const bus = openBusHere(io.env);
  try {
    if (action === 'create') {
      const repo = typeof args.values.repo === 'string' && args.values.repo.trim() !== '' ? args.values.repo.trim() : null;
      const made = await bus.tokens.create({ agent: name as string, repoPath: repo, expiresInMs, scopes, actor: actorOf(io.env) });
      if (json) {
        io.stdout.write(`${JSON.stringify({ name: made.record.agent, id: made.record.tokenId, token: made.token, expires_at: made.record.expiresAt })}\n`);
      } else {
        io.stdout.write(`${made.token}\n`);
        io.stderr.write(
          `agent-bus: token ${made.record.tokenId} speaks for ${quoted(made.record.agent)}${made.record.expiresAt === null ? '' : `; it ${untilText(made.record.expiresAt)}`}. ` +
            'It is shown this once: give it to the other machine as AGENT_BUS_TOKEN (or agent-bus login).\n',
        );
      }
      return 0;
    }
    if (action === 'list') {
      const tokens = await bus.tokens.list();
      if (json) {
        io.stdout.write(`${JSON.stringify(tokens.map(listed))}\n`);
        return 0;
      }
      if (tokens.length === 0) {
        io.stdout.write('(no tokens yet: agent-bus token create NAME)\n');
        return 0;
      }
      const now = Date.now();
      const rows = tokens.map((token) => [token.tokenId, token.agent, state(token, now), token.scopes || '-', when(token.createdAt, now), when(token.lastUsedAt, now), token.expiresAt === null ? 'never' : when(token.expiresAt, now)]);
      const head = ['ID', 'NAME', 'STATE', 'SCOPES', 'CREATED', 'LAST USED', 'EXPIRES'];
      const widths = head.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
      for (const row of [head, ...rows]) io.stdout.write(`${row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd()}\n`);
      return 0;
    }
    const revoked = await bus.tokens.revoke(name as string, actorOf(io.env));
    if (revoked.length === 0) {
      const known = (await bus.tokens.list()).some((token) => token.tokenId === name || token.agent === name);
      throw new BusError(
        known
          ? `token revoke: every token ${isTokenId(name as string) ? 'with id' : 'of'} ${quoted(name)} is revoked already`
          : `token revoke: no token has the id or speaks for ${quoted(name)}; see agent-bus token list`,
      );
    }
    if (json) io.stdout.write(`${JSON.stringify({ revoked })}\n`);
    else io.stdout.write(`revoked ${revoked.length} token${revoked.length === 1 ? '' : 's'}: ${revoked.join(', ')}\n`);
    return 0;
  } finally {
    await bus.close();
  }
};

/** The tools of file reservations: reserve_files, release_files and list_reservations. */
import { z } from 'zod';
import { repoOf } from '../core/names.js';
import { parseDuration } from '../model/duration.js';
import type { ToolKit } from './tool-kit.js';

/** A time to live as a model gives it: seconds, or `30m`, `2h`; none: the default. */
export function ttlOf(ttl: string | number | null | undefined): number | undefined {
  if (ttl === null || ttl === undefined || ttl === '') return undefined;
  return parseDuration(String(ttl));
}

export function reservationTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText } = kit;
  tool(
    'reserve_files',
    {
      description:
        "Reserve files or globs of your repo before a large edit, so other agents' edits of them are refused (exclusive) or warned (shared: true). Paths are relative to the repo root (absolute ones inside it are made relative); globs: *, **, ?, {a,b}. All or none: a path another agent holds is refused, naming the holder. ttl: seconds or '30m', '2h' (default 1h, at most 24h); reserving again renews.",
      inputSchema: {
        paths: z.array(z.string()).min(1),
        ttl: z.union([z.string(), z.number().int()]).nullish(),
        reason: optionalText(),
        shared: z.boolean().nullish(),
      },
    },
    async ({ paths, ttl, reason, shared }) => {
      const ttlMs = ttlOf(ttl);
      const reserved = await bus.reservations.reserve({
        holder: session.name,
        repo: repoOf(session.name),
        repoRoot: session.repoPath,
        paths,
        ...(ttlMs === undefined ? {} : { ttlMs }),
        reason: reason ?? null,
        shared: shared ?? false,
        sessionBound: session.holdsSession,
      });
      return { reserved };
    },
  );
  tool(
    'release_files',
    {
      description: 'Release your reservations of these paths (as reserved), or all of yours when no paths are given.',
      inputSchema: { paths: z.array(z.string()).nullish() },
    },
    async ({ paths }) => {
      const released = await bus.reservations.release({
        holder: session.name,
        repo: repoOf(session.name),
        paths: paths === null || paths === undefined || paths.length === 0 ? null : paths,
        repoRoot: session.repoPath,
        actor: session.name,
      });
      return { released };
    },
  );
  tool(
    'list_reservations',
    {
      description: "The live reservations of your repo (or of the repo named), each with its holder, path, exclusive or shared, since, until and reason.",
      inputSchema: { repo: optionalText() },
    },
    async ({ repo }) => ({ reservations: await bus.reservations.list(repo?.trim() || repoOf(session.name)) }),
  );
}

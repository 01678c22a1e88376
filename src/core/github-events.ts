/**
 * A GitHub webhook delivery as one readable message: the event, what happened, who did it, and the
 * link, so an agent reading its inbox knows at once whether to act. Check and workflow failures are
 * marked as such (the integration's severity applies to them; everything else is info). An event
 * this module does not know becomes one line naming it, never an error. Payload text (titles,
 * comments, commit subjects) is untrusted: it is carried as mail text, cut to a readable length.
 */

/** What a delivery says, for the bus. */
export interface GithubSummary {
  /** The `X-GitHub-Event` type. */
  event: string;
  text: string;
  /** A check, check suite or workflow run that completed without success. */
  failure: boolean;
  /** `repository.name`, which may pick the repo the mail goes to. */
  repo: string | null;
  link: string | null;
}

/** The conclusions that count as a failure. */
const FAILED = new Set(['failure', 'timed_out', 'startup_failure', 'action_required']);

/** The longest piece of payload text (a title, a comment) carried. */
const TEXT_LIMIT = 1_000;

type Json = Record<string, unknown>;

function object(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null;
}

function at(value: unknown, ...path: string[]): string | null {
  let here: unknown = value;
  for (const key of path) here = object(here)[key];
  return text(here);
}

/** Payload text cut to a readable length, on one line where it is a title. */
function cut(value: string | null, oneLine = false): string {
  const whole = (value ?? '').trim();
  const shaped = oneLine ? whole.replace(/\s+/g, ' ') : whole;
  return shaped.length > TEXT_LIMIT ? `${shaped.slice(0, TEXT_LIMIT)}…` : shaped;
}

function short(sha: string | null): string {
  return sha === null ? '' : sha.slice(0, 7);
}

function branchOf(ref: string | null): string {
  return (ref ?? '').replace(/^refs\/(heads|tags)\//, '');
}

/** The outcome of a completed check or run, in words. */
function outcome(conclusion: string | null): string {
  if (conclusion === 'success') return 'succeeded';
  if (conclusion === null) return 'completed';
  return FAILED.has(conclusion) ? `failed (${conclusion})` : conclusion.replace(/_/g, ' ');
}

/** Each known event: what happened, and the link to it. */
const DESCRIBE: Record<string, (payload: Json, by: string) => { what: string; link: string | null; failure?: boolean }> = {
  ping: (payload) => ({ what: `the webhook is set up (hook ${at(payload, 'hook_id') ?? '?'})${at(payload, 'zen') ? `: ${cut(at(payload, 'zen'), true)}` : ''}`, link: null }),
  push(payload, by) {
    const branch = branchOf(at(payload, 'ref'));
    if (object(payload).deleted === true) return { what: `${by} deleted ${branch}`, link: null };
    const commits = Array.isArray(payload.commits) ? payload.commits.length : 0;
    const subject = cut(at(payload, 'head_commit', 'message')?.split('\n')[0] ?? null, true);
    const forced = object(payload).forced === true ? ' (forced)' : '';
    return { what: `${by} pushed ${commits} commit(s) to ${branch}${forced}${subject ? `: ${subject}` : ''}`, link: at(payload, 'compare') };
  },
  pull_request(payload, by) {
    const pr = object(payload.pull_request);
    const number = at(payload, 'number') ?? at(pr, 'number') ?? '?';
    const action = at(payload, 'action') ?? 'changed';
    const merged = action === 'closed' && pr.merged === true;
    const done = merged ? 'merged' : action === 'review_requested' ? `review requested from ${at(payload, 'requested_reviewer', 'login') ?? at(payload, 'requested_team', 'name') ?? 'someone'}` : action.replace(/_/g, ' ');
    return { what: `pull request #${number} ${done} by ${by}: ${cut(at(pr, 'title'), true)}`, link: at(pr, 'html_url') };
  },
  pull_request_review(payload, by) {
    const review = object(payload.review);
    const state = (at(review, 'state') ?? 'commented').toLowerCase().replace(/_/g, ' ');
    const body = cut(at(review, 'body'));
    return { what: `pull request #${at(payload, 'pull_request', 'number') ?? '?'} review ${at(payload, 'action') ?? 'submitted'} by ${by}: ${state}${body ? `\n${body}` : ''}`, link: at(review, 'html_url') ?? at(payload, 'pull_request', 'html_url') };
  },
  pull_request_review_comment(payload, by) {
    const comment = object(payload.comment);
    return { what: `pull request #${at(payload, 'pull_request', 'number') ?? '?'} review comment ${at(payload, 'action') ?? 'created'} by ${by} on ${at(comment, 'path') ?? 'the diff'}:\n${cut(at(comment, 'body'))}`, link: at(comment, 'html_url') };
  },
  issue_comment(payload, by) {
    const issue = object(payload.issue);
    const kind = issue.pull_request !== undefined ? 'pull request' : 'issue';
    return { what: `${kind} #${at(issue, 'number') ?? '?'} comment ${at(payload, 'action') ?? 'created'} by ${by}:\n${cut(at(payload, 'comment', 'body'))}`, link: at(payload, 'comment', 'html_url') ?? at(issue, 'html_url') };
  },
  issues(payload, by) {
    const issue = object(payload.issue);
    return { what: `issue #${at(issue, 'number') ?? '?'} ${(at(payload, 'action') ?? 'changed').replace(/_/g, ' ')} by ${by}: ${cut(at(issue, 'title'), true)}`, link: at(issue, 'html_url') };
  },
  check_run(payload) {
    const run = object(payload.check_run);
    const conclusion = at(run, 'conclusion');
    const completed = at(payload, 'action') === 'completed';
    return { what: `check ${cut(at(run, 'name'), true) || '?'} ${completed ? outcome(conclusion) : (at(payload, 'action') ?? 'changed')} on ${short(at(run, 'head_sha'))}`, link: at(run, 'html_url'), failure: completed && conclusion !== null && FAILED.has(conclusion) };
  },
  check_suite(payload) {
    const suite = object(payload.check_suite);
    const conclusion = at(suite, 'conclusion');
    const completed = at(payload, 'action') === 'completed';
    return { what: `check suite on ${at(suite, 'head_branch') ?? short(at(suite, 'head_sha'))} ${completed ? outcome(conclusion) : (at(payload, 'action') ?? 'changed')}`, link: null, failure: completed && conclusion !== null && FAILED.has(conclusion) };
  },
  workflow_run(payload, by) {
    const run = object(payload.workflow_run);
    const conclusion = at(run, 'conclusion');
    const completed = at(payload, 'action') === 'completed';
    const name = cut(at(run, 'name'), true) || 'workflow';
    const state = completed ? outcome(conclusion) : (at(payload, 'action') ?? 'changed').replace(/_/g, ' ');
    return { what: `workflow ${name} #${at(run, 'run_number') ?? '?'} ${state} on ${at(run, 'head_branch') ?? short(at(run, 'head_sha'))} (${at(run, 'event') ?? 'run'} by ${by})`, link: at(run, 'html_url'), failure: completed && conclusion !== null && FAILED.has(conclusion) };
  },
};

/** What a GitHub delivery of `event` with this parsed payload says. */
export function describeGithubEvent(event: string, payload: unknown): GithubSummary {
  const body = object(payload);
  const repo = at(body, 'repository', 'name');
  const fullName = at(body, 'repository', 'full_name') ?? repo;
  const by = at(body, 'sender', 'login') ?? 'someone';
  const where = fullName === null ? '' : ` in ${fullName}`;
  const describe = Object.hasOwn(DESCRIBE, event) ? DESCRIBE[event] : undefined;
  if (describe === undefined) {
    const action = at(body, 'action');
    return { event, text: `[github] ${event}${action ? ` (${action})` : ''} event${where}`, failure: false, repo, link: null };
  }
  const { what, link, failure = false } = describe(body, by);
  return { event, text: `[github] ${event}${where}: ${what}${link ? `\n${link}` : ''}`, failure, repo, link };
}

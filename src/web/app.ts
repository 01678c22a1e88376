/**
 * The dashboard's page: sign in if need be, draw every view, then keep them
 * current from the server's event stream. `audit` rows go straight into
 * Activity; a `change` of the store makes the views read again, at most a
 * few times a second however busy the bus is. First on the page: what needs
 * a person (tasks waiting, their unread mail, reservations, collisions) and
 * who is there; the tasks and the fleet of spawned agents next; the pictures
 * of the day below.
 */
import { Activity } from './activity.js';
import { ApiError, getJson, postJson } from './api.js';
import { Brain } from './brain.js';
import { Collisions } from './collisions.js';
import { Compose } from './compose.js';
import { byId, show } from './dom.js';
import { Fleet } from './fleet.js';
import { MyMail } from './my-mail.js';
import { Notices } from './notices.js';
import { loadPictures } from './pictures.js';
import { Reservations } from './reservations.js';
import { Tasks } from './tasks.js';
import { Roster } from './roster.js';
import { Threads } from './threads.js';
import { keepMomentsCurrent } from './time.js';
import type { AuditRow, Me } from './types.js';
import { Wake } from './wake.js';
import { Integrations } from './integrations.js';

/** The views read again this soon after the bus moves, and then at most once a second however busy it is. */
const FIRST_READ_MS = 100;
const READ_EVERY_MS = 1_000;

async function signIn(asks: 'key' | 'token'): Promise<void> {
  byId('board').hidden = true;
  byId('signin').hidden = false;
  show(byId('signin-label'), asks === 'token' ? 'Token' : 'Key');
  show(
    byId('signin-help'),
    asks === 'token' ? 'This hub shows its dashboard to the holder of an agent-bus token (agent-bus token create NAME). The dashboard acts as that agent.' : 'Open the URL agent-bus web printed (it carries the key), or paste the key from it here.',
  );
  byId<HTMLFormElement>('signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const secret = byId<HTMLInputElement>('signin-secret').value;
    postJson('/api/signin', { secret }).then(
      () => window.location.replace('/'),
      (error: unknown) => show(byId('signin-error'), error instanceof ApiError ? error.message : 'The dashboard could not be reached.'),
    );
  });
  byId('signin-secret').focus();
}

async function start(): Promise<void> {
  let me: Me;
  try {
    me = await getJson<Me>('/api/me');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signIn(error.asks ?? 'key');
    show(byId('live'), 'The dashboard could not be reached.');
    return;
  }
  byId('signin').hidden = true;
  byId('board').hidden = false;
  show(byId('whoami'), `${me.place === 'hub' ? 'On the hub' : 'On this machine'} as ${me.name}`);
  show(byId('about'), me.store ? `The bus: ${me.store} · ` : '', `agent-bus ${me.version}`);
  show(byId('compose-as'), `Mail goes from ${me.name}.`);
  const signOut = byId<HTMLButtonElement>('signout');
  signOut.hidden = false;
  signOut.addEventListener('click', () => void postJson('/api/signout', {}).finally(() => window.location.replace('/')));

  const threads = new Threads((threadId, to) => compose.replyIn(threadId, to));
  const activity = new Activity((threadId) => void threads.show(threadId));
  const compose = new Compose(() => undefined);
  const roster = new Roster();
  const notices = new Notices();
  notices.clearing = me.may_clear_notices;
  const reservations = new Reservations();
  reservations.releasing(me.name, me.may_release_reservations);
  const tasks = new Tasks();
  tasks.running(me.may_spawn);
  const fleet = new Fleet();
  fleet.acting(me.may_spawn, me.may_control_runners);
  const brain = new Brain();
  const wake = new Wake();
  const integrations = new Integrations();
  const myMail = new MyMail(me.name, (threadId) => void threads.show(threadId));
  const collisions = new Collisions();
  const everything = (): Promise<unknown> =>
    Promise.allSettled([roster.load(), myMail.load(), tasks.load(), fleet.load(), reservations.load(), collisions.load(), activity.load(), threads.load(), notices.load(), brain.load(), wake.load(), integrations.load(), loadPictures()]);
  keepMomentsCurrent();

  let pending: number | undefined;
  let lastRead = 0;
  const changed = (): void => {
    if (pending !== undefined) return;
    const wait = Math.max(FIRST_READ_MS, lastRead + READ_EVERY_MS - Date.now());
    pending = window.setTimeout(() => {
      pending = undefined;
      lastRead = Date.now();
      void Promise.allSettled([roster.load(), myMail.load(), tasks.load(), fleet.load(), reservations.load(), collisions.load(), threads.load(), compose.refresh(), notices.load(), brain.load(), wake.load(), integrations.load(), loadPictures()]);
    }, wait);
  };
  const live = byId('live');
  const events = new EventSource('/api/events');
  let connected = false;
  events.addEventListener('open', () => {
    show(live, 'live');
    live.className = 'on';
    // Back after a break: what happened meanwhile came as no event, so everything is read again.
    if (connected) void everything();
    connected = true;
  });
  events.addEventListener('error', () => {
    show(live, 'reconnecting…');
    live.className = 'off';
  });
  events.addEventListener('audit', (event) => {
    const row = JSON.parse((event as MessageEvent<string>).data) as AuditRow;
    activity.push(row);
    changed();
  });
  events.addEventListener('change', changed);
  // The stream is asked for before the first reads: what changes while they are under way (a click
  // on the page can make it) comes as an event, not between the reads and the stream's start.
  await everything();
}

void start();

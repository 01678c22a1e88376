/**
 * The dashboard's front, in a real headless Chromium over a real `agent-bus web`, on buses the real
 * CLI and hooks wrote: what its first screen shows at desktop and phone sizes, a contrast audit of
 * every view in the light and the dark theme, what an empty bus and an empty board say to do next,
 * and times said the way people read them, never as raw stamps.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, startWeb, type RunningWeb } from '../helpers/browser.js';
import { runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { repoIn } from '../helpers/reservations.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** A raw stored stamp, as only JSON may show it. */
const RAW_STAMP = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

function cli(bus: TempBus, args: string[], options: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): string {
  const result = runCli(args, { env: { ...bus.env, ...options.env }, input: options.input, cwd: options.cwd });
  assert.equal(result.code, 0, `agent-bus ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** A Claude Code-shaped PreToolUse call through the real hook: an edit of `file` by `name`. */
function edit(bus: TempBus, root: string, name: string, file: string): string {
  return cli(bus, ['hook-pre-tool', '--client', 'claude'], {
    env: { AGENT_BUS_NAME: name, AGENT_BUS_REPO: root },
    cwd: root,
    input: JSON.stringify({ session_id: `s-${name}`, cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: `${root}/${file}`, old_string: 'a', new_string: 'b' } }),
  });
}

interface Scene {
  bus: TempBus;
  root: string;
  /** The id of the open task for shop/codex, printed by `task add`. */
  waiting: string;
}

/**
 * A bus with what needs a person on it, made as a user's agents make it: three agents, one of them
 * working (its prompt hook said so), a task waiting, mail to the person, a live reservation and a
 * collision. `everything` adds the rest: a task in every state, a refused write, notices of every
 * severity, a wake, and integrations in and out.
 */
function scene(everything: boolean): Scene {
  const bus = tempBus();
  const root = repoIn(bus);
  for (const name of ['shop/claude', 'shop/codex', 'docs/opencode']) cli(bus, ['send', `${name} is here`, '--to', '*', '--name', name]);
  // Its folder is there once the bus is: shop/codex is woken by a command when mail comes.
  if (everything) writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ 'shop/codex': 'true' }));
  cli(bus, ['hook-user-prompt', '--client', 'claude'], { env: { AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: root }, input: '{}' });
  const waiting = cli(bus, ['task', 'add', 'write the release notes', '--to', 'shop/codex']).trim();
  cli(bus, ['send', 'the build is green: may I merge the login branch?', '--to', 'human', '--name', 'shop/claude']);
  cli(bus, ['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--ttl', '2h', '--name', 'shop/claude', '--repo', root]);
  edit(bus, root, 'shop/claude', 'src/shared.ts');
  assert.match(edit(bus, root, 'shop/codex', 'src/shared.ts'), /shop\/claude wrote src\/shared\.ts/, 'the second write is a collision');
  if (everything) {
    const taken = cli(bus, ['task', 'add', 'fix the flaky login test', '--to', 'shop/claude']).trim();
    cli(bus, ['task', 'take', taken, '--name', 'shop/claude']);
    cli(bus, ['task', 'add', 'tag the release', '--to', 'shop/codex', '--after', waiting]);
    for (const [title, end] of [
      ['update the changelog', ['done', '--result', 'updated']],
      ['bump the API version', ['fail', '--reason', 'the API is frozen']],
    ] as const) {
      const id = cli(bus, ['task', 'add', title, '--to', 'docs/opencode']).trim();
      cli(bus, ['task', 'take', id, '--name', 'docs/opencode']);
      cli(bus, ['task', end[0], id, ...end.slice(1), '--name', 'docs/opencode']);
    }
    cli(bus, ['task', 'cancel', cli(bus, ['task', 'add', 'rename the repo', '--to', 'docs/opencode']).trim()]);
    cli(bus, ['reserve', 'src/billing.ts', '--name', 'shop/codex', '--repo', root]);
    assert.match(edit(bus, root, 'shop/claude', 'src/billing.ts'), /"permissionDecision":"deny"/);
    cli(bus, ['notice', 'the staging database restarts at five', '-s', 'critical']);
    cli(bus, ['channel', 'publish', 'ops', 'a deploy freeze until the release', '-s', 'alert']);
    cli(bus, ['channel', 'publish', 'ci', 'main is green again', '-s', 'info']);
    cli(bus, ['send', 'please tag the release candidate', '--to', 'shop/codex', '--name', 'human']);
    cli(bus, ['integration', 'add', 'ci', '--kind', 'generic', '--to', 'shop/claude']);
  }
  return { bus, root, waiting };
}

async function open(web: RunningWeb, viewport: { width: number; height: number }, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(web.url);
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
  return { page, errors, close: () => context.close() };
}

/** One text that misses AA: where, what, its colours and the ratio it has and needs. */
interface Offender {
  where: string;
  text: string;
  color: string;
  background: string;
  ratio: number;
  needs: number;
  px: number;
}

/**
 * The contrast audit, run in the page: every text a person can see (text nodes, the values and
 * placeholders of form fields, SVG labels) against what is behind it, as WCAG 2 computes contrast.
 * The text's colour and every background up the tree are composited as the browser paints them,
 * each element's opacity applied to its whole group; what has no background of its own shows its
 * ancestors'. AA asks 4.5:1 of body text and 3:1 of large text (24 px, or 18.66 px bold). Text of
 * a disabled control is exempt (WCAG 1.4.3), and so is text clipped away for screen readers only.
 */
function auditContrast(): { checked: number; offenders: Offender[] } {
  type Rgba = [number, number, number, number];
  const offenders: Offender[] = [];
  let checked = 0;

  const parse = (value: string): Rgba | null => {
    if (value === 'transparent') return [0, 0, 0, 0];
    const match = /^rgba?\(([^)]*)\)$/.exec(value.trim());
    if (match === null) return null;
    const parts = (match[1] ?? '').split(/[\s,/]+/).filter((part) => part !== '').map(Number);
    if (parts.length < 3 || parts.some((part) => Number.isNaN(part))) return null;
    return [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0, parts[3] ?? 1];
  };
  /** Premultiplied source over premultiplied destination. */
  const over = (top: Rgba, under: Rgba): Rgba => [top[0] + under[0] * (1 - top[3]), top[1] + under[1] * (1 - top[3]), top[2] + under[2] * (1 - top[3]), top[3] + under[3] * (1 - top[3])];
  const premultiplied = (color: Rgba, alpha = 1): Rgba => [color[0] * color[3] * alpha, color[1] * color[3] * alpha, color[2] * color[3] * alpha, color[3] * alpha];
  const scaled = (color: Rgba, by: number): Rgba => [color[0] * by, color[1] * by, color[2] * by, color[3] * by];
  const luminance = (color: Rgba): number => {
    const [r, g, b] = [color[0], color[1], color[2]].map((channel) => {
      const value = channel / 255;
      return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratioOf = (a: Rgba, b: Rgba): number => {
    const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
    return (light + 0.05) / (dark + 0.05);
  };
  const css = (color: Rgba): string => `rgb(${color.slice(0, 3).map((channel) => Math.round(channel)).join(', ')})`;
  const describe = (node: Element): string => {
    const parts: string[] = [];
    for (let at: Element | null = node; at !== null && parts.length < 4; at = at.parentElement) {
      const classes = [...at.classList].map((name) => `.${name}`).join('');
      parts.unshift(`${at.tagName.toLowerCase()}${at.id ? `#${at.id}` : ''}${classes}`);
      if (at.id) break;
    }
    return parts.join(' > ');
  };

  /**
   * The colour a pixel of `node` ends up, painted over the page: each element's background, then
   * its children's group (with the child's opacity), then `ink` (the text's colour) on top when given.
   */
  const paint = (node: Element, ink: Rgba | null): Rgba => {
    const chain: Element[] = [];
    for (let at: Element | null = node; at !== null; at = at.parentElement) chain.unshift(at);
    const group = (index: number): Rgba => {
      const element = chain[index] as Element;
      const style = getComputedStyle(element);
      // SVG shapes have no background: a text's box inside an SVG shows the page behind the SVG.
      let color = premultiplied(element instanceof SVGElement ? [0, 0, 0, 0] : (parse(style.backgroundColor) ?? [0, 0, 0, 0]));
      if (index + 1 < chain.length) color = over(scaled(group(index + 1), Number(getComputedStyle(chain[index + 1] as Element).opacity)), color);
      else if (ink !== null) color = over(premultiplied(ink), color);
      return color;
    };
    // The canvas below the root: the root's own background is painted on it, as browsers do.
    const canvas: Rgba = matchMedia('(prefers-color-scheme: dark)').matches ? [18, 18, 18, 1] : [255, 255, 255, 1];
    const painted = over(scaled(group(0), Number(getComputedStyle(chain[0] as Element).opacity)), premultiplied(canvas));
    return painted;
  };

  const hiddenForScreenReadersOnly = (node: Element): boolean => {
    for (let at: Element | null = node; at !== null; at = at.parentElement) {
      const style = getComputedStyle(at);
      if (style.clipPath !== 'none' || (style.clip !== 'auto' && style.clip !== '')) return true;
    }
    return false;
  };

  const check = (node: Element, text: string, color: string, pseudo: string): void => {
    if (!node.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) || node.getClientRects().length === 0) return;
    if (hiddenForScreenReadersOnly(node) || node.closest('select option, datalist, title, script, style') !== null) return;
    if ((node.closest('button, input, select, textarea') as HTMLButtonElement | null)?.disabled === true) return;
    checked++;
    const style = getComputedStyle(node);
    let px = Number.parseFloat(style.fontSize);
    // SVG text is drawn at its font size in the drawing's units, scaled to the drawing's size on screen.
    if (node instanceof SVGGraphicsElement) px *= node.getScreenCTM()?.a ?? 1;
    const large = px >= 24 || (px >= 18.66 && Number.parseInt(style.fontWeight, 10) >= 700);
    const needs = large ? 3 : 4.5;
    const ink = parse(color);
    const where = `${describe(node)}${pseudo}`;
    const excerpt = text.trim().replace(/\s+/g, ' ').slice(0, 50);
    if (ink === null) {
      offenders.push({ where, text: excerpt, color, background: 'a colour this audit cannot read', ratio: 0, needs, px });
      return;
    }
    const background = paint(node, null);
    const painted = paint(node, ink);
    const ratio = ratioOf(painted, background);
    if (ratio < needs) offenders.push({ where, text: excerpt, color: css(painted), background: css(background), ratio: Math.round(ratio * 100) / 100, needs, px: Math.round(px * 10) / 10 });
  };

  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text !== null; text = walker.nextNode()) {
    const parent = text.parentElement;
    if (parent === null || (text.textContent ?? '').trim() === '' || parent.closest('textarea') !== null) continue;
    check(parent, text.textContent ?? '', parent instanceof SVGElement ? getComputedStyle(parent).fill : getComputedStyle(parent).color, '');
  }
  for (const field of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('input, textarea, select')) {
    if (field instanceof HTMLInputElement && ['checkbox', 'radio', 'hidden', 'submit', 'button'].includes(field.type)) continue;
    if (field instanceof HTMLSelectElement) check(field, field.selectedOptions[0]?.textContent ?? '', getComputedStyle(field).color, '');
    else if (field.value !== '') check(field, field.value, getComputedStyle(field).color, '');
    else if (field.placeholder !== '') check(field, field.placeholder, getComputedStyle(field, '::placeholder').color, '::placeholder');
  }
  return { checked, offenders };
}

/** The audit in both themes: every offender, named. */
async function auditBothThemes(page: Page, view: string): Promise<string[]> {
  const found: string[] = [];
  // The test runner's TypeScript loader names the audit's inner functions through a helper of its own,
  // which the page does not have: it is given one that does nothing.
  await page.evaluate('globalThis.__name ??= (target) => target');
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const { checked, offenders } = await page.evaluate(auditContrast);
    assert.ok(checked > 0, `the audit of ${view} (${colorScheme}) saw no text`);
    for (const offender of offenders) {
      found.push(`${view} (${colorScheme}): ${offender.where} "${offender.text}" is ${offender.color} on ${offender.background}: ${offender.ratio}:1, needs ${offender.needs}:1 at ${offender.px}px`);
    }
  }
  return found;
}

test('every text on every view meets WCAG AA contrast in the light and the dark theme', async () => {
  const { bus } = scene(true);
  const web = await startWeb(bus);
  const opened = await open(web, DESKTOP);
  const { page } = opened;
  const offenders: string[] = [];
  try {
    await page.locator('#task-board button.task', { hasText: 'write the release notes' }).waitFor();
    await page.locator('#notice-list li.notice', { hasText: 'main is green again' }).waitFor();
    await page.locator('#activity-list li.op-collision').first().waitFor();
    await page.locator('#wake-rows li', { hasText: 'shop/codex' }).first().waitFor();
    // Every column of the board holds a task: each state's card is audited.
    for (const state of ['blocked', 'open', 'taken', 'done', 'failed', 'cancelled']) await page.locator(`#task-board .column[data-state="${state}"] button.task`).first().waitFor();
    offenders.push(...(await auditBothThemes(page, 'the board')));

    // The forms folded away, opened; a refusal and a success said by the page.
    const folded = page.locator('#board details:not([open]) > summary');
    while ((await folded.count()) > 0) await folded.first().click();
    await page.getByLabel('To', { exact: true }).fill('shop/nobody');
    await page.getByLabel('Message', { exact: true }).fill('to nobody');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('#compose-result.error').waitFor();
    await page.getByLabel('Title', { exact: true }).fill('audit the colours');
    await page.getByLabel('For', { exact: true }).fill('shop/codex');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator('#task-result.ok').waitFor();
    offenders.push(...(await auditBothThemes(page, 'the opened forms and their results')));

    // A thread opened, and a task opened.
    await page.locator('#thread-list button.thread', { hasText: 'may I merge' }).click();
    await page.locator('#thread-sends li.send').first().waitFor();
    await page.locator('#task-board button.task', { hasText: 'update the changelog' }).click();
    await page.locator('#task-history li').first().waitFor();
    offenders.push(...(await auditBothThemes(page, 'a thread and a task opened')));

    // The phone's layout.
    await page.setViewportSize(PHONE);
    offenders.push(...(await auditBothThemes(page, 'the phone')));
  } finally {
    await opened.close();
  }
  // The sign-in page, with its refusal.
  const context = await browser.newContext({ viewport: DESKTOP });
  try {
    const signin = await context.newPage();
    await signin.goto(`${web.origin}/`);
    await signin.getByLabel('Key').fill('not the key');
    await signin.getByRole('button', { name: 'Sign in' }).click();
    await signin.locator('#signin-error', { hasText: 'not the key' }).waitFor();
    offenders.push(...(await auditBothThemes(signin, 'the sign-in page')));
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
  // An empty bus: its next steps.
  const empty = tempBus();
  const emptyWeb = await startWeb(empty);
  const bare = await open(emptyWeb, DESKTOP);
  try {
    offenders.push(...(await auditBothThemes(bare.page, 'an empty bus')));
  } finally {
    await bare.close();
    await emptyWeb.stop();
    empty.cleanup();
  }
  assert.equal(offenders.length, 0, `${offenders.length} texts miss AA contrast:\n${offenders.join('\n')}`);
});

test('the contrast audit finds what misses AA: a colour a shade too light, faded text, a transparent button, SVG labels and placeholders', async () => {
  const context = await browser.newContext({ viewport: DESKTOP });
  try {
    const page = await context.newPage();
    await page.setContent(`<!doctype html><html><head><style>#hint::placeholder { color: #aaaaaa }</style></head><body style="margin:0;background:#ffffff;font:15px sans-serif">
      <p style="color:#767676">passes: 4.54 to 1</p>
      <p style="color:#777777">too light: 4.48 to 1</p>
      <p style="color:#949494;font-size:19px;font-weight:700">large and bold: 3.03 to 1 passes</p>
      <p style="color:#949494;font-size:19px">19 px, not bold: body text, fails</p>
      <p style="color:#949494;font-size:24px">24 px: large, passes</p>
      <div style="opacity:.5"><p style="color:#000000">faded by its parent</p></div>
      <div style="background:#ffffff"><button style="background:none;border:0;color:#ffffff">white on white</button></div>
      <div style="background:rgba(0,0,0,.9)"><p style="color:#ffffff">on a dark veil: passes</p></div>
      <button disabled style="color:#eeeeee;background:#ffffff">disabled: exempt</button>
      <span style="position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);color:#ffffff">for screen readers only</span>
      <svg width="200" height="40" viewBox="0 0 200 40"><text x="0" y="20" style="fill:#bbbbbb;font-size:11px">a pale label</text></svg>
      <input id="hint" placeholder="a pale hint" style="background:#ffffff">
      <p hidden style="color:#ffffff">hidden: not seen</p>
    </body></html>`);
    await page.evaluate('globalThis.__name ??= (target) => target');
    const { checked, offenders } = await page.evaluate(auditContrast);
    assert.equal(checked, 10, 'the texts a person sees: the hidden, the disabled and the screen-reader-only ones aside');
    assert.deepEqual(offenders.map((offender) => [offender.text, offender.needs]).sort(), [
      ['a pale hint', 4.5],
      ['a pale label', 4.5],
      ['faded by its parent', 4.5],
      ['19 px, not bold: body text, fails', 4.5],
      ['too light: 4.48 to 1', 4.5],
      ['white on white', 4.5],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
    assert.equal(offenders.find((offender) => offender.text === 'too light: 4.48 to 1')?.ratio, 4.48);
    assert.equal(offenders.find((offender) => offender.text === 'white on white')?.ratio, 1);
  } finally {
    await context.close();
  }
});

/** Whether every box is inside the window's height with the page unscrolled, and the boxes that are not. */
async function outsideFirstScreen(page: Page, locators: Record<string, ReturnType<Page['locator']>>): Promise<string[]> {
  const height = page.viewportSize()?.height ?? 0;
  const outside: string[] = [];
  for (const [what, locator] of Object.entries(locators)) {
    // The page reads its views again as the bus moves (and once when its event stream opens): a list
    // drawn anew between finding an item and measuring it is measured again.
    let box: Awaited<ReturnType<typeof locator.boundingBox>> = null;
    for (let attempt = 0; attempt < 20 && box === null; attempt++) {
      await locator.waitFor({ timeout: 5_000 });
      box = await locator.boundingBox();
    }
    if (box === null || box.y < 0 || box.y + box.height > height) outside.push(`${what} at ${box === null ? 'no box' : `${Math.round(box.y)}–${Math.round(box.y + box.height)} px`} (the window is ${height} px high)`);
  }
  return outside;
}

for (const [size, viewport] of [
  ['a desktop (1280×800)', DESKTOP],
  ['a phone (390×844)', PHONE],
] as const) {
  test(`the first screen of ${size} shows who is there and what needs a person; the pictures come below`, async () => {
    const { bus, waiting } = scene(false);
    const web = await startWeb(bus);
    const opened = await open(web, viewport);
    const { page } = opened;
    try {
      const needs = page.locator('#needs');
      const roster = page.locator('#roster-list');
      const claude = roster.locator('li.agent', { hasText: 'shop/claude' });
      const seen = await outsideFirstScreen(page, {
        'the roster': roster.locator('li.agent', { hasText: 'shop/codex' }),
        "shop/claude's presence": claude.locator('.state.working', { hasText: 'working' }),
        'the task waiting': needs.locator('li', { hasText: 'write the release notes' }),
        'the mail to human': needs.locator('li', { hasText: 'may I merge the login branch?' }),
        'the live reservation': needs.locator('li', { hasText: 'src/auth.ts' }),
        'the collision': needs.locator('li', { hasText: 'src/shared.ts' }),
      });
      assert.deepEqual(seen, [], 'not on the first screen');
      assert.equal(await page.evaluate(() => window.scrollY), 0, 'the page was scrolled');
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the page is wider than the window');
      // Each item says what it is about: the task with its state and short id, the mail's sender, the holder, the two writers.
      assert.match(await needs.locator('li', { hasText: 'write the release notes' }).innerText(), new RegExp(`open, for shop/codex · just now · ${waiting.slice(-12)}`));
      assert.match(await needs.locator('li', { hasText: 'may I merge' }).innerText(), /from shop\/claude · just now/);
      assert.match(await needs.locator('li', { hasText: 'src/auth.ts' }).innerText(), /shop\/claude holds src\/auth\.ts in shop · exclusive · (1h 59m|2h 00m) left/);
      assert.match(await needs.locator('li', { hasText: 'src/shared.ts' }).innerText(), /src\/shared\.ts in shop: shop\/codex and shop\/claude both wrote it · just now/);
      // The pictures of the day come below all of it.
      const lowest = await page.evaluate(() => Math.max(...[...document.querySelectorAll('#needs, #roster')].map((node) => node.getBoundingClientRect().bottom)));
      const pictures = await page.locator('#pictures').boundingBox();
      assert.ok(pictures !== null && pictures.y >= lowest, `the pictures start at ${pictures?.y} px, above the end of the first screen's panels at ${lowest} px`);
      // Listed, the mail is only looked at: nothing is marked delivered or read. Opened, its thread
      // shows, drawn for human, which marks human's copy delivered by the page.
      const copy = (): Array<{ delivered_via: string | null; read_at: string | null }> => bus.rows("SELECT delivered_via, read_at FROM messages WHERE body LIKE 'the build is green%'");
      assert.deepEqual(copy(), [{ delivered_via: null, read_at: null }]);
      await needs.getByRole('button', { name: /may I merge the login branch/ }).click();
      await page.locator('#thread-sends li.send', { hasText: 'may I merge the login branch?' }).waitFor();
      await page.locator('#thread-sends .copies [data-state="delivered"]', { hasText: 'human: delivered' }).waitFor({ timeout: 5_000 });
      assert.deepEqual(copy(), [{ delivered_via: 'web', read_at: null }]);
      // A waiting task opens from the first screen.
      await needs.getByRole('button', { name: 'write the release notes' }).click();
      await page.locator('#task-title', { hasText: 'write the release notes' }).waitFor();
      assert.deepEqual(opened.errors, []);
    } finally {
      await opened.close();
      await web.stop();
      bus.cleanup();
    }
  });
}

test('an empty bus says how to wire a repo, and an empty board how to add a task; each hint leaves once it is done', async () => {
  const bus = tempBus();
  const web = await startWeb(bus);
  const opened = await open(web, DESKTOP);
  const { page } = opened;
  try {
    const wire = page.locator('#roster-list');
    await wire.locator('code', { hasText: 'agent-bus init' }).waitFor();
    assert.match(await wire.innerText(), /Put a repo on the bus: in the repo, run agent-bus init, then start Claude Code \(or another client it wired\) there\./);
    const board = page.locator('#tasks-summary');
    await board.locator('code').waitFor();
    assert.equal(await board.locator('code').textContent(), 'agent-bus task add "what to do" --to NAME');
    assert.match(await board.innerText(), /No tasks yet\. Hand one to an agent with agent-bus task add "what to do" --to NAME, or with New task below\./);
    await page.locator('#thread-list code', { hasText: 'agent-bus send "hello" --to NAME' }).waitFor();
    assert.match(await page.locator('#activity-list').innerText(), /^Nothing has happened on the bus yet\.$/);
    // The hints are text: the commands are code elements holding nothing but their words.
    assert.equal(await page.locator('#roster-list code *, #tasks-summary code *, #thread-list code *').count(), 0);
    // Nothing needs a person, and each list says so.
    for (const list of ['#waiting-list', '#my-mail-list', '#held-list', '#collision-list']) assert.match(await page.locator(list).innerText(), /^(None|No tasks yet)/, list);
    // An agent arrives: the roster shows it in place of the hint. A task is made: the board's hint goes.
    cli(bus, ['send', 'hello', '--to', '*', '--name', 'shop/claude']);
    await wire.locator('li.agent', { hasText: 'shop/claude' }).waitFor({ timeout: 5_000 });
    assert.equal(await wire.locator('code').count(), 0, 'the hint stayed beside the roster');
    cli(bus, ['task', 'add', 'write the release notes', '--to', 'shop/claude']);
    await page.locator('#tasks-summary', { hasText: '1 not closed, of 1.' }).waitFor({ timeout: 5_000 });
    await page.locator('#waiting-list li', { hasText: 'write the release notes' }).waitFor();
    await page.locator('#activity-list li.op-task').waitFor();
    assert.equal(await page.locator('#activity-list li.empty').count(), 0, 'Activity still says nothing happened');
    assert.deepEqual(opened.errors, []);
  } finally {
    await opened.close();
    await web.stop();
    bus.cleanup();
  }
});

test('the page says times as people read them, never a raw stamp, and keeps them current as it stays open', async () => {
  const { bus } = scene(true);
  const web = await startWeb(bus);
  const context = await browser.newContext({ viewport: DESKTOP });
  try {
    const page = await context.newPage();
    // The page's clock is one the test moves: the words of every moment follow it, with no answer from the server.
    await page.clock.install();
    await page.goto(web.url);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    await page.locator('#task-board button.task', { hasText: 'update the changelog' }).waitFor();
    await page.locator('#wake-rows li time').first().waitFor();
    await page.locator('#thread-list button.thread', { hasText: 'may I merge' }).click();
    // Drawn for human, the thread marks human's copy delivered: the page reads again once for that change.
    await page.locator('#thread-sends .copies [data-state="delivered"]', { hasText: /^\S+ human: delivered/ }).waitFor({ timeout: 5_000 });
    await page.locator('#task-board button.task', { hasText: 'update the changelog' }).click();
    await page.locator('#task-history li').first().waitFor();
    const shown = (): Promise<{ text: string; hints: string[] }> =>
      page.evaluate(() => ({
        text: document.body.innerText,
        // What a pointer or a screen reader is told besides: tooltips, labels, and the pictures' own titles.
        hints: [...document.querySelectorAll('[title], [aria-label]')].flatMap((node) => [node.getAttribute('title') ?? '', node.getAttribute('aria-label') ?? '']).concat([...document.querySelectorAll('svg title')].map((node) => node.textContent ?? '')),
      }));
    const first = await shown();
    assert.doesNotMatch(first.text, RAW_STAMP);
    assert.deepEqual(first.hints.filter((hint) => RAW_STAMP.test(hint)), []);
    // Every moment is a <time> holding its stamp, said in words: none is a clock reading or a stamp.
    const moments = await page.locator('time').allTextContents();
    assert.ok(moments.length > 10, `${moments.length} moments`);
    for (const words of moments) assert.match(words, /^(just now|now|\d+ (s|min|h) ago|in \d+ (s|min|h)|\d{1,2} [A-Z][a-z]{2}( \d{4})? \d\d:\d\d)$/, `a moment said as ${JSON.stringify(words)}`);
    const mail = page.locator('#my-mail-list li', { hasText: 'may I merge' }).locator('time');
    assert.match((await mail.textContent()) ?? '', /^(just now|\d+ s ago)$/);
    // From here the server answers nothing the page asks: the words change all the same.
    await page.route('**/api/**', (route) => route.abort());
    await page.clock.fastForward('02:10');
    await page.waitForFunction(() => document.querySelector('#my-mail-list time')?.textContent === '2 min ago', undefined, { timeout: 5_000 });
    assert.equal(await page.locator('#task-history li time').first().textContent(), '2 min ago');
    // A day on, a moment is its local date and time.
    await page.clock.fastForward('25:00:00');
    await page.waitForFunction(() => /^\d{1,2} [A-Z][a-z]{2}( \d{4})? \d\d:\d\d$/.test(document.querySelector('#my-mail-list time')?.textContent ?? ''), undefined, { timeout: 5_000 });
    assert.doesNotMatch((await shown()).text, RAW_STAMP);
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
});

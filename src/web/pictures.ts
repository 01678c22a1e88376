/** Pictures: mail per hour over the last day, in the browser's own hours, and who wrote to whom, drawn as a graph. */
import { stampMillis } from '../model/when.js';
import { getJson } from './api.js';
import { byId, el, hueOf, show, svg } from './dom.js';
import type { MailDay } from './types.js';

/** An hour of the day (`YYYY-MM-DDTHH`, UTC) as the browser's clock says it: "14:00". */
function localHour(hour: string): string {
  const start = new Date(stampMillis(`${hour}:00:00Z`));
  return Number.isNaN(start.getTime()) ? hour.slice(11) : `${String(start.getHours()).padStart(2, '0')}:00`;
}

/** The busiest names drawn in the graph; the rest are summed up in words. */
const NODES = 24;

export async function loadPictures(): Promise<void> {
  const day = await getJson<MailDay>('/api/mail');
  drawHours(day);
  drawGraph(day);
}

function drawHours(day: MailDay): void {
  const width = 480;
  const height = 150;
  const top = Math.max(1, ...day.hours.map((hour) => hour.sends));
  const total = day.hours.reduce((sum, hour) => sum + hour.sends, 0);
  const bar = width / day.hours.length;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 20}`, role: 'img', 'aria-label': `${total} sends in the last 24 hours; the busiest hour had ${top === 1 && total === 0 ? 0 : top}` });
  day.hours.forEach((hour, index) => {
    const tall = (hour.sends / top) * height;
    const rect = svg('rect', { x: (index * bar + 1).toFixed(1), y: (height - tall).toFixed(1), width: (bar - 2).toFixed(1), height: Math.max(tall, hour.sends > 0 ? 1 : 0).toFixed(1), class: 'bar' }, svg('title', {}, `from ${localHour(hour.hour)}: ${hour.sends}`));
    chart.append(rect);
    if (index % 6 === 0) chart.append(svg('text', { x: (index * bar).toFixed(1), y: height + 15, class: 'axis' }, localHour(hour.hour)));
  });
  // The same numbers as a table, for a screen reader.
  const table = el(
    'table',
    { class: 'visually-hidden' },
    el('caption', {}, 'Sends per hour'),
    el('tr', {}, el('th', { scope: 'col' }, 'Hour'), el('th', { scope: 'col' }, 'Sends')),
    ...day.hours.map((hour) => el('tr', {}, el('td', {}, localHour(hour.hour)), el('td', {}, hour.sends))),
  );
  show(byId('mail-chart'), chart, table, el('p', { class: 'muted' }, `${total} sends`));
}

function drawGraph(day: MailDay): void {
  const traffic = new Map<string, number>();
  for (const pair of day.pairs) {
    traffic.set(pair.from, (traffic.get(pair.from) ?? 0) + pair.sends);
    traffic.set(pair.to, (traffic.get(pair.to) ?? 0) + pair.sends);
  }
  const names = [...traffic.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, NODES).map(([name]) => name);
  const target = byId('talk-graph');
  if (names.length === 0) {
    show(target, el('p', { class: 'muted' }, 'No mail between agents in the last day.'));
    return;
  }
  // Wide enough for a name's label on either side of the circle.
  const width = 600;
  const height = 320;
  const centre = { x: width / 2, y: height / 2 };
  const radius = 125;
  const place = new Map(
    names.map((name, index) => {
      const angle = (index / names.length) * 2 * Math.PI - Math.PI / 2;
      return [name, { x: centre.x + radius * Math.cos(angle), y: centre.y + radius * Math.sin(angle), angle }];
    }),
  );
  const shown = day.pairs.filter((pair) => place.has(pair.from) && place.has(pair.to));
  const heaviest = Math.max(1, ...shown.map((pair) => pair.sends));
  const graph = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `mail between ${names.length} names in the last day: ${shown.length} pairs` });
  graph.append(svg('defs', {}, svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 19, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: 'userSpaceOnUse', orient: 'auto' }, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrowhead' }))));
  for (const pair of shown) {
    const from = place.get(pair.from);
    const to = place.get(pair.to);
    if (from === undefined || to === undefined) continue;
    const widthOf = 1 + (pair.sends / heaviest) * 5;
    // A curve bent towards the centre, so two names writing both ways draw two lines.
    const bend = { x: (from.x + to.x) / 2 + (centre.x - (from.x + to.x) / 2) * 0.35, y: (from.y + to.y) / 2 + (centre.y - (from.y + to.y) / 2) * 0.35 };
    const d = pair.from === pair.to ? `M${from.x},${from.y} a14,14 0 1,1 1,0` : `M${from.x.toFixed(1)},${from.y.toFixed(1)} Q${bend.x.toFixed(1)},${bend.y.toFixed(1)} ${to.x.toFixed(1)},${to.y.toFixed(1)}`;
    graph.append(svg('path', { d, class: 'edge', 'stroke-width': widthOf.toFixed(1), 'marker-end': 'url(#arrow)' }, svg('title', {}, `${pair.from} → ${pair.to}: ${pair.sends}`)));
  }
  for (const name of names) {
    const at = place.get(name);
    if (at === undefined) continue;
    const right = Math.cos(at.angle) >= 0;
    const label = name.length > 26 ? `${name.slice(0, 25)}…` : name;
    const group = svg('g', { class: 'node' }, svg('title', {}, `${name}: ${traffic.get(name) ?? 0} sends`));
    const dot = svg('circle', { cx: at.x.toFixed(1), cy: at.y.toFixed(1), r: 7 });
    (dot as SVGElement).style.fill = `hsl(${hueOf(name)} 65% 55%)`;
    group.append(dot, svg('text', { x: (at.x + (right ? 11 : -11)).toFixed(1), y: (at.y + 4).toFixed(1), 'text-anchor': right ? 'start' : 'end', class: 'label' }, label));
    graph.append(group);
  }
  const rest = traffic.size - names.length;
  const listed = el('ul', { class: 'visually-hidden', 'aria-label': 'who wrote to whom' }, ...shown.map((pair) => el('li', {}, `${pair.from} to ${pair.to}: ${pair.sends}`)));
  show(target, graph, listed, rest > 0 ? el('p', { class: 'muted' }, `and ${rest} more names with less mail`) : null);
}

/**
 * Colour for terminal output. Off for --json, for pipes and under NO_COLOR;
 * picocolors is loaded only when colour is actually on. Each agent keeps one
 * colour everywhere: its name's SHA-1 picks it from a fixed palette.
 */
import { sha1Bytes } from '../model/ids.js';
import { printable } from '../render/format.js';
import { setting, type Env } from '../model/settings.js';

type Paint = (text: string) => string;

export interface Style {
  enabled: boolean;
  bold: Paint;
  dim: Paint;
  warn: Paint;
  agent(name: string): string;
}

const plain: Paint = (text) => text;

export const PLAIN_STYLE: Style = { enabled: false, bold: plain, dim: plain, warn: plain, agent: (name) => printable(name) };

export function colourWanted(stream: { isTTY?: boolean }, env: Env, json = false): boolean {
  return Boolean(stream.isTTY) && !json && !setting(env, 'NO_COLOR') && env.TERM !== 'dumb';
}

export function paletteIndex(name: string, size: number): number {
  return sha1Bytes(name).readUInt32BE(0) % size;
}

export async function makeStyle(stream: { isTTY?: boolean }, env: Env, json = false): Promise<Style> {
  if (!colourWanted(stream, env, json)) return PLAIN_STYLE;
  const pc = (await import('picocolors')).default.createColors(true);
  const palette: Paint[] = [
    pc.cyan, pc.green, pc.yellow, pc.blue, pc.magenta, pc.red,
    pc.cyanBright, pc.greenBright, pc.yellowBright, pc.blueBright, pc.magentaBright, pc.redBright,
  ];
  return {
    enabled: true,
    bold: pc.bold,
    dim: pc.dim,
    warn: pc.yellow,
    agent: (name) => (palette[paletteIndex(name, palette.length)] ?? plain)(printable(name)),
  };
}

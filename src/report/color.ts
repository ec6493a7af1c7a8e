// Whether to colour output, by the conventions ESLint (through chalk/supports-color) and most CLIs follow:
// --color / --no-color first, then FORCE_COLOR (set and not 0/false: colour), then NO_COLOR (set and
// non-empty: none, https://no-color.org), then TERM=dumb (none), then whether stdout is a terminal.
import type { Io } from '../io.js';

export function colorEnabled(flag: boolean | undefined, io: Pick<Io, 'env' | 'isTTY'>): boolean {
  if (flag !== undefined) return flag;
  const force = io.env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  if (io.env.TERM === 'dumb') return false;
  return io.isTTY?.(1) === true;
}

/** --color / --no-color as one tri-state (commander gives `color: true|false`; parseArgs two booleans). */
export function colorFlag(values: { color?: boolean; 'no-color'?: boolean; noColor?: boolean }): boolean | undefined {
  if (values['no-color'] || values.noColor) return false;
  return values.color;
}

const wrap = (a: number, b: number) => (s: string) => `\u001b[${a}m${s}\u001b[${b}m`;
export const COLOURS = { red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), cyan: wrap(36, 39), dim: wrap(2, 22), bold: wrap(1, 22), underline: wrap(4, 24) };
const id = (s: string) => s;
export const PLAIN: typeof COLOURS = { red: id, green: id, yellow: id, cyan: id, dim: id, bold: id, underline: id };
export const palette = (on: boolean): typeof COLOURS => (on ? COLOURS : PLAIN);

/**
 * Writes the README's table of environment variables from the settings registry and its help
 * (src/model/settings-help.ts). test/unit/settings.test.ts fails while the two differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsTable } from '../src/model/settings-help.js';

const path = new URL('../README.md', import.meta.url);
const text = readFileSync(path, 'utf8');
const section = /^(## Environment variables\n\n)(?:\|.*\n)+/m;
if (!section.test(text)) throw new Error('README.md has no table under "## Environment variables"');
writeFileSync(path, text.replace(section, (_, heading: string) => `${heading}${settingsTable()}\n`));

/**
 * Writes the generated parts of the configuration reference (docs/configuration.md) from the
 * settings registry and its help (src/model/settings-help.ts); the text around them is kept.
 * test/unit/settings.test.ts fails while the page and the registry differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fillReference } from '../src/model/settings-help.js';

const path = new URL('../docs/configuration.md', import.meta.url);
const text = readFileSync(path, 'utf8');
const filled = fillReference(text);
if (filled !== text) writeFileSync(path, filled);
console.log(`docs/configuration.md: ${filled === text ? 'unchanged' : 'written'}`);

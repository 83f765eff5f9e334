import { existsSync, readFileSync } from 'node:fs';
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import { describe, expect, it } from 'vitest';
import { lifecycleMachine } from '../../machines/lifecycle.js';
import {
  betweenMarkers,
  dotHash,
  README_END,
  README_START,
  readmeBlock,
  replaceBetweenMarkers,
  stampSvg,
  svgDotHash,
} from '../../src/viz/artifacts.js';
import { exportMachine } from '../../src/viz/export.js';

const readmePath = new URL('../../README.md', import.meta.url);
const svgPath = new URL('../../docs/lifecycle.svg', import.meta.url);

describe('the README diagram', () => {
  it('is the current Mermaid export of the lifecycle machine', () => {
    expect(existsSync(readmePath), 'README.md is missing: run `npx tsx scripts/readme-diagram.ts`').toBe(true);
    const block = betweenMarkers(readFileSync(readmePath, 'utf8'));
    expect(
      block,
      `README.md lacks the markers ${README_START} … ${README_END}: add them where the diagram goes`,
    ).not.toBe(null);
    expect(block, 'the README diagram is stale: run `npx tsx scripts/readme-diagram.ts`').toBe(
      readmeBlock(exportMachine(lifecycleMachine, 'mermaid')),
    );
  });

  it('is replaced between the markers and nowhere else', () => {
    const text = `# qmd\n\nintro\n${README_START}\nold\n${README_END}\n\nrest\n`;
    expect(replaceBetweenMarkers(text, '\nnew\n')).toBe(
      `# qmd\n\nintro\n${README_START}\nnew\n${README_END}\n\nrest\n`,
    );
    expect(() => replaceBetweenMarkers('# no markers\n', 'x')).toThrow(/lifecycle-diagram:start/);
  });
});

describe('docs/lifecycle.svg', () => {
  const dot = exportMachine(lifecycleMachine, 'dot');
  const svg = existsSync(svgPath) ? readFileSync(svgPath, 'utf8') : '';

  it('was rendered from the current DOT export', () => {
    expect(svgDotHash(svg), 'docs/lifecycle.svg is stale: run `npx tsx scripts/render-diagram.ts`').toBe(dotHash(dot));
  });

  it('is exactly what the renderer makes of it now (deterministic, nothing edited by hand)', async () => {
    const graphviz = await Graphviz.load();
    expect(stampSvg(graphviz.dot(dot), dot)).toBe(svg);
  });

  it('draws all six states', () => {
    for (const state of ['connected', 'closingTransport', 'draining', 'disposingStore', 'failedStep', 'done']) {
      expect(svg).toContain(`<title>${state}</title>`);
    }
  });
});

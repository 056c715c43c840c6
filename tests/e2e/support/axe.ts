/**
 * axe-core in a real page: injected through the DevTools protocol (an extension page's CSP
 * refuses inline scripts), run on the whole document, in light or dark.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical violations, one line each (rule, how many nodes, the first few). */
export async function seriousViolations(page: Page, scheme: 'light' | 'dark'): Promise<string[]> {
  await page.emulateMedia({ colorScheme: scheme });
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> } }).axe;
    const { violations } = await axe.run(document, { resultTypes: ['violations'] });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id} (${v.nodes.length}): ${v.help}; ${v.nodes
            .slice(0, 3)
            .map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`)
            .join(' | ')}`,
      );
    interface AxeViolation {
      id: string;
      impact?: string;
      help: string;
      nodes: { target: string[]; failureSummary?: string }[];
    }
  });
}

/**
 * What sticks out of the page sideways or is cut: the document scrolling sideways, an element
 * whose box sticks out past either edge of the viewport (the left one in a right-to-left page),
 * or content hidden by a box too narrow for it (text cut on purpose with a visible ellipsis
 * excepted). Headless Chromium hides scrollbars, so the scrollbar's own width is not measured here.
 */
export async function horizontalOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const problems: string[] = [];
    if (document.documentElement.scrollWidth > width)
      problems.push(`the page is ${document.documentElement.scrollWidth} px wide in ${width} px`);
    const clipped = (el: Element): boolean => {
      for (let at: Element | null = el.parentElement; at; at = at.parentElement) {
        const style = getComputedStyle(at);
        if (style.textOverflow === 'ellipsis' && !/flex|grid/.test(style.display)) return true;
      }
      return false;
    };
    for (const el of document.body.querySelectorAll('*')) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || (box.left >= -0.5 && box.right <= width + 0.5) || clipped(el)) continue;
      problems.push(
        `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} spans ${Math.round(box.left)}–${Math.round(box.right)} px: "${(el.textContent ?? '').slice(0, 60)}"`,
      );
    }
    // Content cut inside a box that hides its overflow is cut just the same, unless the box ends
    // its own text with an ellipsis (which a flex or grid container never does: its text is in items).
    for (const el of document.body.querySelectorAll('*')) {
      const style = getComputedStyle(el);
      const ellipsis = style.textOverflow === 'ellipsis' && !/flex|grid/.test(style.display);
      if (style.overflowX === 'visible' || ellipsis || el.classList.contains('visually-hidden')) continue;
      if (el.scrollWidth > el.clientWidth + 1)
        problems.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} hides ${el.scrollWidth - el.clientWidth} px`);
    }
    return problems;
  });
}

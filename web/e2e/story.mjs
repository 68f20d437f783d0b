// What the stories of people using the console share (newcomer.mjs,
// chat.mjs, documentsets.mjs, and console.mjs's keyboard): Debian's
// Chromium, a browser context per person signed in with an API key,
// axe-core on every view, screenshots, the errors the pages log, and
// moving through a page with the keyboard alone.

import { chromium } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** check throws when cond is false, saying what was checked. */
export function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

/**
 * Story is one run of a story against the console at base: name prefixes
 * its screenshots in outdir.
 */
export class Story {
  constructor(name, base, outdir) {
    this.name = name;
    this.url = base.endsWith('/') ? base : `${base}/`;
    this.outdir = outdir;
    this.consoleErrors = [];
    this.step = 'start';
    this.page = null; // the page shot when the story fails
  }

  /** launch starts the browser. */
  async launch() {
    this.browser = await chromium.launch({
      executablePath: process.env.QUARRY_CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
      timeout: 60_000,
    });
  }

  /** signIn opens a browser context of its own for who and signs in with key. */
  async signIn(who, key) {
    const context = await this.browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(15_000);
    const p = await context.newPage();
    p.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) this.consoleErrors.push(`${who}: ${m.text()}`);
    });
    p.on('pageerror', (e) => this.consoleErrors.push(`${who}: ${e}`));
    await p.goto(this.url);
    await p.getByLabel('API key', { exact: true }).fill(key);
    await p.keyboard.press('Enter');
    await p.locator('#who:not([hidden])').waitFor();
    this.page = p;
    return p;
  }

  /**
   * view checks the view on screen with axe-core (no serious or critical
   * violation; with strict, no violation at all, and nothing wider than a
   * 390 px screen but the tables, which scroll) and shoots it (with
   * strict, at 390 px too).
   */
  async view(p, name, { strict = false } = {}) {
    await p.waitForFunction(() => !document.querySelector('.view:not([hidden])[aria-busy="true"]'));
    if (!(await p.evaluate(() => Boolean(window.axe)))) await p.evaluate(axeSource);
    const bad = await p.evaluate(async (all) => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.filter((v) => all || v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    }, strict);
    console.log(`axe ${name}: ${bad.length ? JSON.stringify(bad) : strict ? 'no violation' : 'no serious violation'}`);
    check(bad.length === 0, `axe on ${name}: ${JSON.stringify(bad)}`);
    const file = path.join(this.outdir, `${this.name}-${name}.png`);
    await p.screenshot({ path: file, fullPage: true });
    console.log(`screenshot ${file}`);
    if (!strict) return;
    const size = p.viewportSize();
    await p.setViewportSize({ width: 390, height: 844 });
    await p.waitForTimeout(50);
    const wide = await p.evaluate(() => document.documentElement.scrollWidth);
    const narrow = path.join(this.outdir, `${this.name}-${name}-390.png`);
    await p.screenshot({ path: narrow, fullPage: true });
    console.log(`screenshot ${narrow}`);
    await p.setViewportSize(size);
    check(wide <= 390, `${name} at 390 px is ${wide} px wide`);
  }

  /**
   * run runs body, then checks that no page logged an error; a failure
   * is printed with its step and the page's screenshot, and makes the
   * process's exit code 1.
   */
  async run(body) {
    try {
      await this.launch();
      await body();
      check(this.consoleErrors.length === 0, `no errors in the page: ${this.consoleErrors.join(' | ')}`);
      console.log(JSON.stringify({ ok: true }));
    } catch (e) {
      console.error(`FAILED at step "${this.step}": ${e.message}`);
      if (this.consoleErrors.length) console.error(`page errors: ${this.consoleErrors.join(' | ')}`);
      if (this.page) await this.page.screenshot({ path: path.join(this.outdir, `${this.name}-failure.png`), fullPage: true }).catch(() => {});
      process.exitCode = 1;
    } finally {
      await this.browser?.close();
    }
  }
}

/** keys counts what tabTo did, for the closing line. */
export const keys = { tabTo: 0, presses: 0, ms: 0 };

/**
 * tabTo presses Tab (Shift+Tab with back) until the focus is on what
 * selector finds (and, with name, what has that accessible name), at most
 * max times, as a person with a keyboard would. It checks that the focus
 * is visible there and that the control has a label (its accessible name,
 * as far as the page can tell: aria-labelledby, aria-label, its <label>s,
 * or a button's or link's text), and returns the name and how many keys
 * it took.
 */
export async function tabTo(page, selector, { name, back = false, max = 60 } = {}) {
  const t0 = Date.now();
  keys.tabTo += 1;
  for (let presses = 0; presses <= max; presses++) {
    const at = await page.evaluate(([sel, want]) => {
      const e = document.activeElement;
      if (!e || !e.matches(sel)) return null;
      const text = (t) => (t || '').replace(/\s+/g, ' ').trim();
      let label = '';
      const by = e.getAttribute('aria-labelledby');
      if (by) label = text(by.split(/\s+/).map((id) => document.getElementById(id)?.textContent).join(' '));
      if (!label) label = text(e.getAttribute('aria-label'));
      if (!label && e.labels) label = text([...e.labels].map((l) => l.textContent).join(' '));
      if (!label && ['A', 'BUTTON', 'SUMMARY'].includes(e.tagName)) label = text(e.textContent);
      if (want && label !== want) return null;
      return { label, outline: getComputedStyle(e).outlineStyle };
    }, [selector, name ?? null]);
    if (at) {
      keys.presses += presses;
      keys.ms += Date.now() - t0;
      check(at.outline !== 'none', `focus on ${selector} is visible (outline ${at.outline})`);
      check(at.label !== '', `${selector} has a label`);
      return { name: at.label, presses };
    }
    if (presses < max) await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`check failed: ${selector}${name ? ` "${name}"` : ''} cannot be reached with ${back ? 'Shift+' : ''}Tab`);
}

/** press reaches a control with tabTo and presses key (Enter by default) on it. */
export async function press(page, selector, opts = {}) {
  await tabTo(page, selector, opts);
  await page.keyboard.press(opts.key || 'Enter');
}

/** typeIn reaches a field with tabTo and types text, replacing what it held. */
export async function typeIn(page, selector, text, opts = {}) {
  await tabTo(page, selector, opts);
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type(text);
}

/**
 * choose reaches a select with tabTo and types the start of an option's
 * text (the select's type-ahead, as a keyboard user picks an option on a
 * closed select), then checks the value chosen.
 */
export async function choose(page, selector, text, value, opts = {}) {
  await tabTo(page, selector, opts);
  await page.keyboard.type(text);
  const got = await page.locator(selector).inputValue();
  check(got === value, `typing "${text}" in ${selector} chose ${value} (got ${got})`);
}

/** navTo goes to a section by its link in the nav, from the view (which is after the nav: Shift+Tab). */
export const navTo = (page, section) => press(page, `#nav a[href="#${section}"]`, { back: true, max: 100 });

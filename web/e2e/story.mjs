// What the stories of people using the console share (newcomer.mjs,
// chat.mjs): Debian's Chromium, a browser context per person signed in
// with an API key, axe-core on every view, screenshots, and the errors the
// pages log.

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

  /** view checks the view on screen with axe-core (no serious or critical violation) and shoots it. */
  async view(p, name) {
    await p.waitForFunction(() => !document.querySelector('.view:not([hidden])[aria-busy="true"]'));
    if (!(await p.evaluate(() => Boolean(window.axe)))) await p.evaluate(axeSource);
    const bad = await p.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
    });
    console.log(`axe ${name}: ${bad.length ? JSON.stringify(bad) : 'no serious violation'}`);
    check(bad.length === 0, `axe on ${name}: ${JSON.stringify(bad)}`);
    const file = path.join(this.outdir, `${this.name}-${name}.png`);
    await p.screenshot({ path: file, fullPage: true });
    console.log(`screenshot ${file}`);
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

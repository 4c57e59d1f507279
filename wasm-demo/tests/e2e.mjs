// End-to-end test of the demo page in headless Chromium (Debian's
// /usr/bin/chromium, driven by playwright-core). Serves wasm-demo/www from
// 127.0.0.1, checks what the page promises (labelled controls, the CLI's
// explanation, congestion, weights, down ports, scheme switch, topology
// errors, a responsive simulation equal to `lcmp sim`) and saves screenshots
// to wasm-demo/artifacts/. `LCMP_BIN` is the `lcmp` CLI binary whose
// `explain` output the page must equal.
//
//   LCMP_BIN=target/release/lcmp node --test wasm-demo/tests/e2e.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const www = path.resolve(here, '../www');
const artifacts = path.resolve(here, '../artifacts');
const LCMP_BIN = process.env.LCMP_BIN;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json' };

function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.resolve(www, `.${rel}`);
    if (!file.startsWith(www) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// The page's explanation and the CLI's, for the scenario the page shows.
async function compareWithCli(page, label) {
  const scenario = await page.inputValue('#scenario-json');
  const pageOut = JSON.parse(await page.evaluate(() => document.body.dataset.explanation));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lcmp-wasm-'));
  const file = path.join(dir, 'scenario.json');
  fs.writeFileSync(file, scenario);
  fs.copyFileSync(file, path.join(artifacts, `scenario-${label}.json`));
  const cliOut = JSON.parse(execFileSync(LCMP_BIN, ['explain', file], { encoding: 'utf8' }));
  fs.rmSync(dir, { recursive: true });
  assert.deepEqual(pageOut, cliOut, `page and lcmp explain differ (${label})`);
  return pageOut;
}

const explanation = async (page) => JSON.parse(await page.evaluate(() => document.body.dataset.explanation));
const keptPorts = (e) => e.candidates.filter((c) => c.kept).map((c) => c.port).sort((a, b) => a - b);

test('the LCMP demo page', { timeout: 240_000 }, async () => {
  assert.ok(LCMP_BIN && fs.existsSync(LCMP_BIN), 'set LCMP_BIN to the lcmp CLI binary');
  assert.ok(fs.existsSync(path.join(www, 'pkg/wasm_demo_bg.wasm')), 'build the package first (wasm-demo/build.sh)');
  fs.mkdirSync(artifacts, { recursive: true });
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const errors = [];
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
    await page.goto(url);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });

    // Every control has a label, and Tab moves through them.
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea')]
      .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.closest('label'))
      .map((e) => e.id || e.name || e.outerHTML));
    assert.deepEqual(unlabelled, [], 'controls without a label');
    const focused = [];
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate(() => document.activeElement && document.activeElement.id));
    }
    assert.ok(focused.includes('topology') && focused.includes('switch') && focused.includes('dst'), `Tab order: ${focused}`);

    // DC1 -> DC8 on testbed8: six candidates, and what `lcmp explain` says.
    assert.equal(await page.inputValue('#topology'), 'testbed8');
    assert.equal(await page.$eval('#switch', (s) => s.selectedOptions[0].textContent), 'DC1');
    assert.equal(await page.$eval('#dst', (s) => s.selectedOptions[0].textContent), 'DC8');
    assert.equal(await page.locator('#cands tbody tr').count(), 6);
    const idle = await compareWithCli(page, 'idle');
    assert.deepEqual(keptPorts(idle), [0, 2, 4]);
    await page.screenshot({ path: path.join(artifacts, 'page-1280x800.png') });
    await page.screenshot({ path: path.join(artifacts, 'page-1280-full.png'), fullPage: true });

    // A full queue moves a kept port out once congestion can outweigh path
    // quality (alpha = 1, beta = 3; with the paper's 3:1 it cannot).
    await page.fill('#w-alpha', '1');
    await page.fill('#w-beta', '3');
    let e = await explanation(page);
    assert.deepEqual(keptPorts(e), [0, 2, 4]);
    await page.fill('#p4-q', '100');
    e = await compareWithCli(page, 'full-queue');
    assert.ok(!keptPorts(e).includes(4), `port 4 still kept: ${keptPorts(e)}`);
    assert.ok(e.candidates[4].q > 0);
    assert.equal(e.candidates[4].cut_reason, 'upper_half');
    await page.selectOption('#p4-t', 'rising');
    await compareWithCli(page, 'rising');
    await page.fill('#p4-q', '0');
    await page.selectOption('#p4-t', 'steady');
    await page.click('#reset-weights');
    assert.equal(await page.inputValue('#w-alpha'), '3');

    // alpha = 0 changes the pick of a flow that went to the best path (DC6).
    let sport = 49152;
    for (;; sport++) {
      await page.fill('#f-sport', String(sport));
      if ((await explanation(page)).chosen_port === 4) break;
      assert.ok(sport < 49152 + 200, 'no flow picks port 4');
    }
    await page.fill('#w-alpha', '0');
    e = await compareWithCli(page, 'alpha0');
    assert.notEqual(e.chosen_port, 4, 'alpha = 0 did not change the pick');
    await page.click('#reset-weights');
    assert.equal((await explanation(page)).chosen_port, 4);

    // A port set down is never picked: this flow, and 2000 new ones.
    await page.uncheck('#p4-up');
    e = await compareWithCli(page, 'down');
    assert.notEqual(e.chosen_port, 4);
    assert.equal(e.candidates[4].cut_reason, 'down');
    await page.fill('#send-n', '2000');
    await page.click('#send');
    await page.waitForSelector('#send-table');
    for (const scheme of ['lcmp', 'ecmp', 'ucmp']) {
      const counts = await page.$$eval(`#send-table tr td[data-scheme=${scheme}] .qrow > span:first-child`, (s) => s.map((x) => Number(x.textContent)));
      assert.equal(counts.length, 6);
      assert.equal(counts.reduce((a, b) => a + b, 0), 2000, scheme);
      assert.equal(counts[4], 0, `${scheme} sent flows to a down port`);
    }
    await page.check('#p4-up');

    // Scheme switch.
    await page.check('input[name=scheme][value=ecmp]');
    e = await compareWithCli(page, 'ecmp');
    assert.equal(e.scheme, 'ecmp');
    await page.check('input[name=scheme][value=lcmp]');

    // A bad pasted topology is an error message, not a crash.
    await page.selectOption('#topology', 'pasted');
    await page.fill('#topo-json', '{"name": "broken", "dcs": [');
    await page.click('#use-pasted');
    assert.ok(await page.isVisible('#error'));
    assert.match(await page.textContent('#error'), /topology/);
    // The page keeps explaining the topology it had.
    await page.fill('#w-beta', '2');
    assert.equal(await page.locator('#cands tbody tr').count(), 6);
    await compareWithCli(page, 'after-bad-paste');
    await page.fill('#w-beta', '1');
    // A good one works (two DCs, one link).
    await page.fill('#topo-json', JSON.stringify({ name: 'two', buffer_bytes: 1000000, dcs: [{ id: 1, name: 'A' }, { id: 2, name: 'B' }], links: [{ a: 1, b: 2, capacity_bps: 100000000000, delay_us: 5000 }] }));
    await page.click('#use-pasted');
    assert.ok(!(await page.isVisible('#error')));
    assert.equal(await page.locator('#cands tbody tr').count(), 1);
    await compareWithCli(page, 'pasted');
    await page.selectOption('#topology', 'bso13');
    assert.ok((await page.locator('#cands tbody tr').count()) >= 1);
    await compareWithCli(page, 'bso13');
    await page.selectOption('#topology', 'testbed8');
    assert.equal(await page.$eval('#dst', (s) => s.selectedOptions[0].textContent), 'DC8');
    await page.evaluate(() => { document.activeElement.blur(); document.querySelector('#paste-box').open = false; });

    // The simulation: slowdowns for the three schemes and the tuned
    // profile's LCMP, while the page stays responsive (a click is handled
    // during the run).
    await page.fill('#sim-window', '10');
    await page.dispatchEvent('#sim-window', 'change');
    await page.click('#sim-start');
    await page.waitForSelector('.sim-run', { timeout: 30_000 });
    await page.evaluate(() => document.getElementById('h-sim').scrollIntoView());
    await page.screenshot({ path: path.join(artifacts, 'page-1280-sim-running.png') });
    await page.fill('#f-sport', '50000');
    await page.waitForFunction(() => /done/.test(document.getElementById('sim-status').textContent), null, { timeout: 180_000 });
    // The finished runs are `lcmp sim --json`'s for the page's settings:
    // the same flows, completions and slowdowns (exactly), and the page
    // shows those slowdowns.
    const sim = {
      load: await page.inputValue('#sim-load'),
      windowMs: await page.inputValue('#sim-window'),
      seed: await page.inputValue('#sim-seed'),
      workload: await page.inputValue('#sim-workload'),
    };
    assert.equal(sim.windowMs, '10');
    const snap = JSON.parse(await page.$eval('#sim-out', (e) => e.dataset.snapshot));
    const batch = JSON.parse(execFileSync(LCMP_BIN, ['sim', '--json', '--topology', 'testbed8',
      '--pair', 'DC1:DC8', '--load-ref', 'nic', '--load', sim.load,
      '--window', String(Number(sim.windowMs) / 1000), '--seed', sim.seed, '--seeds', '1',
      '--workload', sim.workload, '--schemes', 'ecmp,ucmp,lcmp,lcmp-tuned'], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    assert.deepEqual(snap.runs.map((r) => r.scheme), ['ecmp', 'ucmp', 'lcmp', 'lcmp-tuned']);
    for (const r of snap.runs) {
      const b = batch.results.find((x) => x.scheme === r.scheme);
      assert.ok(b, `lcmp sim has no ${r.scheme} run`);
      assert.equal(r.running, false, r.scheme);
      assert.ok(r.flows > 0, `${r.scheme}: no flows`);
      for (const k of ['flows', 'completed', 'p50', 'p99']) {
        assert.equal(r[k], b[k], `${r.scheme} ${k}: page ${r[k]}, lcmp sim ${b[k]}`);
      }
      assert.equal(await page.textContent(`.sim-run[data-scheme=${r.scheme}] .p50`), b.p50.toFixed(2));
      assert.equal(await page.textContent(`.sim-run[data-scheme=${r.scheme}] .p99`), b.p99.toFixed(2));
    }
    await page.fill('#f-sport', '49152');
    await page.screenshot({ path: path.join(artifacts, 'page-1280-full-sim.png'), fullPage: true });
    await page.setViewportSize({ width: 800, height: 1000 });
    await page.evaluate(() => { document.activeElement.blur(); window.scrollTo(0, 0); });
    await page.screenshot({ path: path.join(artifacts, 'page-800.png') });
    await page.screenshot({ path: path.join(artifacts, 'page-800-full.png'), fullPage: true });
    await page.evaluate(() => document.getElementById('h-explain').scrollIntoView());
    await page.screenshot({ path: path.join(artifacts, 'page-800-decision.png') });
    await page.evaluate(() => document.getElementById('h-sim').scrollIntoView());
    await page.screenshot({ path: path.join(artifacts, 'page-800-sim.png') });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways at 800 px (${overflow} px)`);
  } finally {
    await browser.close();
    server.close();
  }
  assert.deepEqual(errors, [], 'console errors');
});

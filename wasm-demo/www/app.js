// The page: reads the controls, builds an `lcmp explain` scenario, and draws
// what the wasm module (the Rust crates) answers. No scoring happens here.
import init, { defaults, topology, explain, send_flows, SimDemo } from './pkg/wasm_demo.js';

const $ = (id) => document.getElementById(id);
const WEIGHTS = [
  ['alpha', 'α', 'weight of C_path (Eq. 1)'],
  ['beta', 'β', 'weight of C_cong (Eq. 1)'],
  ['w_dl', 'w_dl', 'delay weight (Eq. 2)'],
  ['w_lc', 'w_lc', 'capacity weight (Eq. 2)'],
  ['w_ql', 'w_ql', 'queue weight (Eq. 4)'],
  ['w_tl', 'w_tl', 'trend weight (Eq. 4)'],
  ['w_dp', 'w_dp', 'duration weight (Eq. 4)'],
];
const TREND_STEP = 25; // % of the buffer the queue moved over the last sample
const QUEUE_SCALE = 0.2; // a full queue bar in the simulation view, fraction of the buffer

const state = {
  defaults: null,
  topo: null, // { topology, switches: [{ id, name, ports: [...] }] }
  topoSpec: 'testbed8', // the scenario's `topology`: a name or the pasted object
  ports: new Map(), // port -> { up, queue, trend }
  last: null, // last explanation
  sim: null,
  simRunning: false,
};

function showError(msg) {
  const e = $('error');
  if (msg) {
    e.textContent = msg;
    e.hidden = false;
  } else {
    e.textContent = '';
    e.hidden = true;
  }
}

function call(f) {
  try {
    return f();
  } catch (err) {
    showError(String(err && err.message ? err.message : err));
    return null;
  }
}

const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '–');
const dcName = (id) => {
  const dc = state.topo && state.topo.topology.dcs.find((d) => d.id === id);
  return dc ? dc.name : String(id);
};
const costColour = (c) => `hsl(${Math.round(120 * (1 - c / 255))}, 65%, 42%)`;
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
};

// ---- controls -------------------------------------------------------------

function buildWeights() {
  const box = $('weights');
  box.textContent = '';
  for (const [key, sym, title] of WEIGHTS) {
    const id = `w-${key}`;
    const input = el('input', { id, type: 'range', min: '0', max: '8', step: '1', value: String(state.defaults.weights[key]), 'aria-describedby': `${id}-v` });
    const out = el('output', { id: `${id}-v`, for: id, text: input.value });
    input.addEventListener('input', () => { out.textContent = input.value; update(); });
    box.append(el('div', { class: 'weight' }, el('label', { for: id, title, text: sym }), input, out));
  }
}

function weights() {
  const w = {};
  for (const [key] of WEIGHTS) w[key] = Number($(`w-${key}`).value);
  return w;
}

function currentSwitch() {
  const id = Number($('switch').value);
  return state.topo.switches.find((s) => s.id === id);
}

function loadTopology(spec) {
  const text = call(() => topology(spec));
  if (text === null) return false;
  showError('');
  state.topo = JSON.parse(text);
  const sw = $('switch');
  sw.textContent = '';
  for (const s of state.topo.switches) sw.append(el('option', { value: String(s.id), text: s.name }));
  $('dst').value = '';
  $('send-out').textContent = '';
  fillDestinations();
  resetPorts();
  return true;
}

function fillDestinations() {
  const s = currentSwitch();
  const dst = $('dst');
  const keep = dst.value === '' ? NaN : Number(dst.value);
  dst.textContent = '';
  for (const d of state.topo.switches) {
    if (d.id !== s.id) dst.append(el('option', { value: String(d.id), text: d.name }));
  }
  const last = state.topo.switches[state.topo.switches.length - 1];
  const want = state.topo.switches.some((d) => d.id === keep && d.id !== s.id) ? keep : last && last.id !== s.id ? last.id : Number(dst.options[0] && dst.options[0].value);
  dst.value = String(want);
}

function resetPorts() {
  state.ports = new Map();
  const s = currentSwitch();
  $('ports-switch').textContent = s.name;
  const box = $('ports');
  box.textContent = '';
  for (const p of s.ports) {
    state.ports.set(p.port, { up: true, queue: 0, trend: 'steady' });
    const id = `p${p.port}`;
    const up = el('input', { id: `${id}-up`, type: 'checkbox', checked: '' });
    const q = el('input', { id: `${id}-q`, type: 'range', min: '0', max: '100', step: '5', value: '0' });
    const qv = el('output', { for: `${id}-q`, text: '0%' });
    const tr = el('select', { id: `${id}-t` });
    for (const t of ['falling', 'steady', 'rising']) tr.append(el('option', { value: t, text: t }));
    tr.value = 'steady';
    const row = el('div', { class: 'port', id: `${id}-row` },
      el('div', { class: 'head' },
        el('strong', { text: `port ${p.port} → ${dcName(p.neighbor)}` }),
        el('span', { class: 'hint', text: `${p.capacity_bps / 1e9} Gbps, ${p.delay_us / 1000} ms` }),
        el('label', { for: `${id}-up` }, up, ' up')),
      el('div', { class: 'ctl' }, el('label', { for: `${id}-q`, text: 'Queue' }), q, qv),
      el('div', { class: 'ctl' }, el('label', { for: `${id}-t`, text: 'Trend' }), tr));
    up.addEventListener('change', () => { state.ports.get(p.port).up = up.checked; row.classList.toggle('down', !up.checked); update(); });
    q.addEventListener('input', () => { state.ports.get(p.port).queue = Number(q.value); qv.textContent = `${q.value}%`; update(); });
    tr.addEventListener('change', () => { state.ports.get(p.port).trend = tr.value; update(); });
    box.append(row);
  }
}

function scheme() {
  return document.querySelector('input[name=scheme]:checked').value;
}

// The scenario, as `lcmp explain` reads it (docs/cli.md). Queue controls
// become two samples 1 ms apart; the decision is made at the second one.
function scenario() {
  const buffer = state.topo.topology.buffer_bytes;
  const samples = [];
  const bytes = (pct) => Math.round((buffer * Math.min(100, Math.max(0, pct))) / 100);
  for (const [port, p] of state.ports) {
    if (p.queue === 0 && p.trend === 'steady') continue;
    const before = p.trend === 'rising' ? p.queue - TREND_STEP : p.trend === 'falling' ? p.queue + TREND_STEP : p.queue;
    samples.push({ t_us: 1000, port, queue_bytes: bytes(before) });
    samples.push({ t_us: 2000, port, queue_bytes: bytes(p.queue) });
  }
  samples.sort((a, b) => a.t_us - b.t_us || a.port - b.port);
  const down = [...state.ports].filter(([, p]) => !p.up).map(([port]) => port);
  const num = (id) => Number($(id).value);
  return {
    topology: state.topoSpec,
    switch: Number($('switch').value),
    profile: $('profile').value,
    weights: weights(),
    seed: num('seed'),
    scheme: scheme(),
    samples,
    down,
    flow: {
      src: $('f-src').value.trim(),
      dst: $('f-dst').value.trim(),
      sport: num('f-sport'),
      dport: num('f-dport'),
      proto: num('f-proto'),
    },
    dst_dc: Number($('dst').value),
    now_us: samples.length ? 2000 : 0,
  };
}

// ---- explanation ----------------------------------------------------------

function update() {
  if (!state.topo) return;
  const sc = scenario();
  const text = JSON.stringify(sc, null, 1);
  $('scenario-json').value = text;
  const out = call(() => explain(text));
  if (out === null) return;
  showError('');
  const e = JSON.parse(out);
  state.last = e;
  document.body.dataset.explanation = out;
  drawExplanation(e);
  drawTopology(e);
}

const CUT_TEXT = { down: 'down', upper_half: 'upper half', over_cut: 'C ≥ cut', not_max_capacity: 'not max capacity' };

function drawExplanation(e) {
  const cut = state.defaults.cut;
  $('cut-value').textContent = String(cut);
  const chosen = e.chosen_port;
  $('reason').textContent = e.chosen_port === null
    ? `No route: ${e.reason_text}.`
    : `${e.scheme.toUpperCase()} sends this flow out of port ${chosen} via ${dcName(e.chosen_neighbor)}: ${e.reason_text}.`;
  const kept = e.candidates.filter((c) => c.kept).sort((a, b) => a.rank - b.rank);
  $('pick-line').textContent = `hash ${e.hash} (0x${e.hash.toString(16).padStart(8, '0')}); kept ${kept.length ? kept.map((c) => c.port).join(', ') : 'none'} in cost order; ${e.candidates.length} candidate${e.candidates.length === 1 ? '' : 's'}.`;
  const rows = [...e.candidates].sort((a, b) => (a.rank ?? 999) - (b.rank ?? 999) || a.port - b.port);
  const tb = document.querySelector('#cands tbody');
  tb.textContent = '';
  let sawUpper = false;
  for (const c of rows) {
    const tr = el('tr', { 'data-port': String(c.port) });
    if (c.kept) tr.classList.add('kept');
    if (c.port === chosen) tr.classList.add('chosen');
    if (!c.up) tr.classList.add('down');
    if (c.cut_reason === 'upper_half' && !sawUpper) {
      tr.classList.add('half-cut');
      sawUpper = true;
    }
    const bar = el('div', { class: 'bar', title: `C = ${c.cost}, cut at ${cut}` },
      el('span', { style: `width:${(100 * c.cost) / 255}%;background:${costColour(c.cost)}` }),
      el('i', { style: `left:${(100 * cut) / 255}%` }));
    const cells = [c.rank ?? '–', c.port, dcName(c.neighbor), c.delay_score, c.cap_score, c.c_path, c.q, c.t, c.d, c.c_cong, c.cost];
    for (const [i, v] of cells.entries()) tr.append(el('td', { class: i === 2 ? 'l' : '', text: String(v) }));
    tr.append(el('td', { class: 'l' }, bar));
    tr.append(el('td', { class: 'l', text: c.port === chosen ? 'picked' : c.kept ? 'yes' : 'no' }));
    tr.append(el('td', { class: 'l', text: c.cut_reason ? CUT_TEXT[c.cut_reason] ?? c.cut_reason : '' }));
    tb.append(tr);
  }
}

function drawTopology(e) {
  const svg = $('topo-svg');
  const NS = 'http://www.w3.org/2000/svg';
  const mk = (tag, attrs, text) => {
    const n = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    return n;
  };
  svg.textContent = '';
  const dcs = state.topo.topology.dcs;
  const sw = Number($('switch').value);
  const dst = Number($('dst').value);
  const W = 600, H = 420, R = Math.min(W, H) / 2 - 40;
  const pos = new Map();
  // The switch on the left, the destination on the right, the rest around.
  const order = [sw, ...dcs.map((d) => d.id).filter((id) => id !== sw && id !== dst)];
  const half = Math.floor((order.length - 1) / 2);
  const others = order.slice(1);
  const top = others.slice(0, half + ((others.length) % 2));
  const bottom = others.slice(top.length);
  pos.set(sw, [W / 2 - R * 1.25, H / 2]);
  pos.set(dst, [W / 2 + R * 1.25, H / 2]);
  top.forEach((id, i) => {
    const a = Math.PI - (Math.PI * (i + 1)) / (top.length + 1);
    pos.set(id, [W / 2 + R * 1.05 * Math.cos(a), H / 2 - R * Math.sin(a)]);
  });
  bottom.forEach((id, i) => {
    const a = Math.PI - (Math.PI * (i + 1)) / (bottom.length + 1);
    pos.set(id, [W / 2 + R * 1.05 * Math.cos(a), H / 2 + R * Math.sin(a)]);
  });
  const cand = new Map(e.candidates.map((c) => [c.neighbor, c]));
  const gEdges = mk('g', {});
  const gHot = mk('g', {});
  const gLabels = mk('g', {});
  for (const l of state.topo.topology.links) {
    const [x1, y1] = pos.get(l.a) || [0, 0];
    const [x2, y2] = pos.get(l.b) || [0, 0];
    const other = l.a === sw ? l.b : l.b === sw ? l.a : null;
    const c = other !== null ? cand.get(other) : undefined;
    if (!c) {
      gEdges.append(mk('line', { class: 'edge', x1, y1, x2, y2 }));
      continue;
    }
    const chosen = c.port === e.chosen_port;
    const colour = c.up ? costColour(c.cost) : '#9aa3ae';
    gHot.append(mk('line', {
      x1, y1, x2, y2, stroke: colour,
      'stroke-width': chosen ? 7 : c.kept ? 4 : 2.5,
      'stroke-dasharray': c.up ? (c.kept ? '' : '6 4') : '2 4',
      'data-port': c.port,
    }));
    const [mx, my] = [(x1 + 2 * x2) / 3, (y1 + 2 * y2) / 3];
    gLabels.append(mk('text', { x: mx + 4, y: my - 4, fill: colour, 'font-weight': 600 }, c.up ? `C ${c.cost}` : 'down'));
    // The path's second hop towards the destination.
    if (other !== dst) {
      const l2 = state.topo.topology.links.find((m) => (m.a === other && m.b === dst) || (m.b === other && m.a === dst));
      if (l2) {
        const [x3, y3] = pos.get(dst);
        gHot.append(mk('line', { x1: x2, y1: y2, x2: x3, y2: y3, stroke: colour, 'stroke-opacity': 0.45, 'stroke-width': chosen ? 5 : 2 }));
      }
    }
  }
  svg.append(gEdges, gHot);
  for (const d of dcs) {
    const [x, y] = pos.get(d.id);
    const cls = d.id === sw ? 'node switch' : d.id === dst ? 'node dst' : 'node';
    const g = mk('g', { class: cls });
    g.append(mk('circle', { cx: x, cy: y, r: 19 }));
    g.append(mk('text', { x, y: y + 4, 'text-anchor': 'middle' }, d.name));
    svg.append(g);
  }
  svg.append(gLabels);
}

// ---- send N flows ---------------------------------------------------------

function sendFlows() {
  const n = Number($('send-n').value);
  const out = call(() => send_flows(JSON.stringify(scenario()), n, Number($('seed').value)));
  if (out === null) return;
  showError('');
  const res = JSON.parse(out);
  const box = $('send-out');
  box.textContent = '';
  const t = el('table', { id: 'send-table' });
  t.append(el('caption', { text: `Where ${n} new flows land, per port` }));
  const head = el('tr', {}, el('th', { scope: 'col', class: 'l', text: 'Port' }));
  for (const r of res) head.append(el('th', { scope: 'col', class: 'l', text: r.scheme.toUpperCase() }));
  t.append(el('thead', {}, head));
  const tb = el('tbody');
  const ports = res[0].ports.map((p) => p.port);
  for (const port of ports) {
    const c = state.last && state.last.candidates.find((x) => x.port === port);
    const tr = el('tr', { 'data-port': String(port) }, el('td', { class: 'l', text: `${port} → ${c ? dcName(c.neighbor) : '?'}` }));
    for (const r of res) {
      const k = r.ports.find((p) => p.port === port).flows;
      tr.append(el('td', { class: 'l', 'data-scheme': r.scheme },
        el('div', { class: 'qrow' }, el('span', { text: String(k) }),
          el('div', { class: 'qbar ubar' }, el('span', { style: `width:${n ? (100 * k) / n : 0}%` })), el('span', { text: `${n ? Math.round((100 * k) / n) : 0}%` }))));
    }
    tb.append(tr);
  }
  t.append(tb);
  box.append(t);
}

// ---- simulation -----------------------------------------------------------

function simReset() {
  state.simRunning = false;
  if (state.sim) state.sim.free();
  state.sim = null;
  $('sim-out').textContent = '';
  $('sim-status').textContent = '';
  $('sim-start').disabled = false;
  $('sim-pause').disabled = true;
}

function simStart() {
  if (!state.sim) {
    const sim = call(() => new SimDemo(Number($('sim-load').value), Number($('sim-window').value), Number($('sim-seed').value), $('sim-workload').value));
    if (sim === null) return;
    showError('');
    state.sim = sim;
  }
  state.simRunning = true;
  $('sim-start').disabled = true;
  $('sim-pause').disabled = false;
  setTimeout(simFrame, 0);
}

function simFrame() {
  if (!state.simRunning || !state.sim) return;
  const t0 = performance.now();
  const speed = Number($('sim-speed').value);
  let more = true;
  let done = 0;
  // At most `speed` ms of simulated time (0: as much as fits) and about
  // 25 ms of work per frame, then draw and yield to the browser.
  while (more && (speed === 0 || done < speed) && performance.now() - t0 < 25) {
    more = state.sim.advance(0.1);
    done += 0.1;
  }
  drawSim(JSON.parse(state.sim.snapshot()), more);
  if (more) setTimeout(simFrame, speed === 0 ? 0 : 16);
  else {
    state.simRunning = false;
    $('sim-start').disabled = true;
    $('sim-pause').disabled = true;
  }
}

function drawSim(snap, more) {
  const box = $('sim-out');
  box.textContent = '';
  box.dataset.snapshot = JSON.stringify(snap); // exact numbers, for tests
  const grid = el('div', { class: 'sim-grid' });
  const now = Math.max(...snap.runs.map((r) => r.now_us));
  $('sim-status').textContent = more ? `simulated ${fmt(now / 1000, 1)} ms…` : `done: ${fmt(now / 1000, 1)} ms simulated`;
  for (const r of snap.runs) {
    const card = el('div', { class: 'sim-run', 'data-scheme': r.scheme });
    card.append(el('h3', { text: r.scheme.toUpperCase() }));
    card.append(el('div', { class: 'stat' },
      el('span', {}, 'median ', el('b', { class: 'p50', text: r.completed ? fmt(r.p50) : '–' })),
      el('span', {}, 'p99 ', el('b', { class: 'p99', text: r.completed ? fmt(r.p99) : '–' }))));
    card.append(el('div', { class: 'hint', text: `FCT slowdown; ${r.completed} of ${r.flows} flows done` }));
    const scale = r.paths.length ? r.paths[0].buffer_bytes * QUEUE_SCALE : 1;
    card.append(el('div', { class: 'hint', text: `orange: queue at DC1 (full bar ${fmt(scale / 1e9, 1)} GB); blue: utilisation` }));
    for (const p of r.paths) {
      const qFrac = Math.min(1, p.queue_bytes / (p.buffer_bytes * QUEUE_SCALE));
      card.append(el('div', { class: 'qrow', title: `port ${p.port} via ${p.via}: queue ${p.queue_bytes} B, ${p.flows} flows` },
        el('span', { text: p.via }),
        el('div', { class: 'qbar' }, el('span', { style: `width:${100 * qFrac}%` })),
        el('span', { text: `${fmt(p.queue_bytes / 1e6, 1)}MB` })));
      card.append(el('div', { class: 'qrow' },
        el('span', { text: '' }),
        el('div', { class: 'qbar ubar' }, el('span', { style: `width:${Math.min(100, 100 * p.utilisation)}%` })),
        el('span', { text: `${Math.round(100 * p.utilisation)}%` })));
    }
    grid.append(card);
  }
  box.append(grid);
}

// ---- wiring ---------------------------------------------------------------

function randomFlow() {
  const r = (n) => Math.floor(Math.random() * n);
  const s = Number($('switch').value), d = Number($('dst').value);
  $('f-src').value = `10.${(s >> 8) & 255}.${s & 255}.${1 + r(254)}`;
  $('f-dst').value = `10.${(d >> 8) & 255}.${d & 255}.${1 + r(254)}`;
  $('f-sport').value = String(49152 + r(16384));
  update();
}

async function main() {
  await init();
  state.defaults = JSON.parse(defaults());
  buildWeights();
  loadTopology('testbed8');
  $('topology').addEventListener('change', () => {
    const v = $('topology').value;
    if (v === 'pasted') {
      $('paste-box').open = true;
      $('topo-json').focus();
      return;
    }
    if (loadTopology(v)) {
      state.topoSpec = v;
      update();
    }
  });
  $('use-pasted').addEventListener('click', () => {
    const text = $('topo-json').value;
    if (loadTopology(text)) {
      state.topoSpec = JSON.parse(text);
      $('topology').value = 'pasted';
      update();
    }
  });
  $('switch').addEventListener('change', () => { $('send-out').textContent = ''; fillDestinations(); resetPorts(); update(); });
  $('dst').addEventListener('change', update);
  // The profiles share the paper's weights (lcmp_decide::Profile); the
  // tuned one's delay saturation and cost band come with its name.
  $('profile').addEventListener('change', update);
  for (const r of document.querySelectorAll('input[name=scheme]')) r.addEventListener('change', update);
  for (const id of ['seed', 'f-src', 'f-dst', 'f-sport', 'f-dport', 'f-proto']) $(id).addEventListener('input', update);
  $('random-flow').addEventListener('click', randomFlow);
  $('reset-weights').addEventListener('click', () => {
    for (const [key] of WEIGHTS) {
      $(`w-${key}`).value = String(state.defaults.weights[key]);
      $(`w-${key}-v`).textContent = String(state.defaults.weights[key]);
    }
    update();
  });
  $('send').addEventListener('click', sendFlows);
  $('sim-start').addEventListener('click', simStart);
  $('sim-pause').addEventListener('click', () => { state.simRunning = false; $('sim-start').disabled = false; $('sim-pause').disabled = true; });
  $('sim-reset').addEventListener('click', simReset);
  for (const id of ['sim-load', 'sim-window', 'sim-workload', 'sim-seed']) $(id).addEventListener('change', simReset);
  update();
  document.body.dataset.ready = '1';
}

main().catch((err) => showError(`could not start: ${err}`));

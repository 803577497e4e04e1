// The operator console: plain script, no framework. Every figure is read from
// the console's JSON API, which reads core's admin API; nothing is made up here.

const REFRESH_MS = 2000;
const numberFormat = new Intl.NumberFormat();

const $ = (id) => document.getElementById(id);

/** An element with text (never HTML: everything shown comes from outside). */
function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const cell of cells) tr.append(cell instanceof Node ? cell : el('td', cell));
  return tr;
}

function emptyRow(tbody, columns, text) {
  const td = el('td', text, 'empty');
  td.colSpan = columns;
  tbody.replaceChildren(row([td]));
}

const num = (n) => el('td', numberFormat.format(Number(n) || 0), 'num');
const time = (iso) => (iso ? new Date(iso).toLocaleString() : '');

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, init) {
  const res = await fetch(path, { credentials: 'same-origin', cache: 'no-store', ...init });
  let body;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(res.status, 'bad_answer', `the console answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? 'error', body?.error?.message ?? `HTTP ${res.status}`);
  return body;
}

function showError(id, err) {
  const box = $(id);
  if (!err) {
    box.hidden = true;
    box.textContent = '';
    return;
  }
  const prefix = err.code === 'unimplemented' ? 'Not available from core yet: ' : 'Could not load: ';
  const text = prefix + err.message;
  if (box.textContent !== text) box.textContent = text;
  box.hidden = false;
}

/** Runs one panel's refresh; its error (or none) shows in the panel. */
async function panel(errorId, load) {
  try {
    await load();
    showError(errorId, undefined);
  } catch (err) {
    showError(errorId, err);
  }
}

async function refreshBinds() {
  const { binds } = await api('/api/binds');
  const tbody = $('binds').tBodies[0];
  if (binds.length === 0) return emptyRow(tbody, 7, 'No carrier bind has reported (no worker running?)');
  tbody.replaceChildren(
    ...binds.map((b) =>
      row([
        b.channel,
        b.bind,
        el('td', b.up ? 'up' : 'down', b.up ? 'state-up' : 'state-down'),
        el('td', `${numberFormat.format(b.windowInUse)} of ${numberFormat.format(b.windowSize)}`, 'num'),
        el('td', (Number(b.submitsPerSecond) || 0).toFixed(1), 'num'),
        b.lastError ? `${b.lastError} (${time(b.lastErrorAt)})` : 'none',
        b.reporter,
      ]),
    ),
  );
}

async function refreshBacklog() {
  const { topics } = await api('/api/backlog');
  const tbody = $('backlog').tBodies[0];
  tbody.replaceChildren(...topics.map((t) => row([t.topic, t.group, t.error ? el('td', `unknown: ${t.error}`, 'num') : num(t.records)])));
}

async function refreshCallbacks() {
  const { applications } = await api('/api/callbacks');
  const tbody = $('callbacks').tBodies[0];
  if (applications.length === 0) return emptyRow(tbody, 7, 'No callback is owed nor has been tried since core started');
  tbody.replaceChildren(
    ...applications.map((a) =>
      row([
        a.applicationName || a.applicationId,
        num(a.owed),
        num(a.waiting),
        num(a.delivered),
        num(a.failedTries),
        num(a.failed),
        a.lastError ? `${a.lastError} (${time(a.lastErrorAt)})` : 'none',
      ]),
    ),
  );
}

const ACTIONS = {
  pause: { label: 'Pause', allowed: (s) => s === 'running' || s === 'scheduled' },
  resume: { label: 'Resume', allowed: (s) => s === 'paused' },
  cancel: { label: 'Cancel', allowed: (s) => s !== 'cancelled' && s !== 'finished', danger: true },
};

function timeLeft(seconds) {
  if (!(seconds >= 0)) return 'unknown';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// Bumped by every campaign action: a refresh asked for before the action answered shows the
// state before it, and is dropped rather than drawn over the action's own answer.
let campaignsVersion = 0;

async function campaignAction(c, action) {
  const name = c.name || c.campaignId;
  if (action === 'cancel' && !window.confirm(`Cancel campaign ${name}? Members not yet handed to a carrier are never sent.`)) return;
  const notice = $('campaigns-notice');
  notice.textContent = `Asking core to ${action} campaign ${name}…`;
  try {
    const path = `/api/campaigns/${encodeURIComponent(c.application)}/${encodeURIComponent(c.campaignId)}/${action}`;
    const after = await api(path, { method: 'POST', headers: { 'x-hermod-console': '1' } });
    campaignsVersion++;
    notice.textContent = `Campaign ${name} is now ${after.state}.`;
    showError('campaigns-error', undefined);
  } catch (err) {
    notice.textContent = '';
    showError('campaigns-error', err);
  }
  await panel('campaigns-error', refreshCampaigns);
}

/**
 * One campaign's row, made once and updated in place by every refresh: its
 * buttons stay the same elements, so a click that straddles a refresh (mouse
 * down before it, up after) still lands, and the keyboard focus stays put.
 */
function campaignRow(key) {
  const cells = Array.from({ length: 7 }, (_, i) => el('td', undefined, i === 4 ? 'num' : undefined));
  const bar = el('progress');
  const progressText = el('div');
  cells[3].append(bar, progressText);
  const entry = { campaign: undefined, tr: row(cells), cells, bar, progressText, buttons: {} };
  for (const [action, spec] of Object.entries(ACTIONS)) {
    const button = el('button', spec.label, spec.danger ? 'danger' : undefined);
    button.type = 'button';
    button.dataset.key = `${key}/${action}`;
    // The campaign as last shown, not as it was when the row was made.
    button.addEventListener('click', () => campaignAction(entry.campaign, action));
    entry.buttons[action] = button;
    cells[6].append(button);
  }
  return entry;
}

/** Sets a text only when it changed, so an unchanged row is left untouched. */
function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

function showCampaign(entry, c) {
  entry.campaign = c;
  const name = c.name || c.campaignId;
  const members = Number(c.members) || 0;
  setText(entry.cells[0], name);
  setText(entry.cells[1], c.application);
  setText(entry.cells[2], c.state);
  entry.bar.max = Math.max(1, members);
  entry.bar.value = Math.max(0, members - (Number(c.remaining) || 0));
  const label = `${numberFormat.format(c.submitted)} of ${numberFormat.format(members)} handed over; ${numberFormat.format(c.delivered)} delivered, ${numberFormat.format(c.failed)} failed, ${numberFormat.format(c.dead)} dead`;
  entry.bar.setAttribute('aria-label', `Progress of ${name}: ${label}`);
  setText(entry.progressText, label);
  setText(entry.cells[4], (Number(c.currentRate) || 0).toFixed(1));
  setText(entry.cells[5], timeLeft(c.secondsLeft));
  for (const [action, spec] of Object.entries(ACTIONS)) {
    const button = entry.buttons[action];
    button.setAttribute('aria-label', `${spec.label} campaign ${name}`);
    button.disabled = !spec.allowed(c.state);
  }
}

const campaignRows = new Map();

async function refreshCampaigns() {
  const version = campaignsVersion;
  const { campaigns } = await api('/api/campaigns');
  if (version !== campaignsVersion) return;
  const tbody = $('campaigns').tBodies[0];
  if (campaigns.length === 0) {
    campaignRows.clear();
    return emptyRow(tbody, 7, 'No campaigns');
  }
  const shown = new Map();
  for (const c of campaigns) {
    const key = `${c.application}/${c.campaignId}`;
    const entry = campaignRows.get(key) ?? campaignRow(key);
    entry.tr.dataset.campaign = c.campaignId;
    showCampaign(entry, c);
    shown.set(key, entry);
  }
  campaignRows.clear();
  for (const [key, entry] of shown) campaignRows.set(key, entry);
  // Rows are moved only when the order changed: a moved button would lose a click under way.
  const wanted = [...shown.values()].map((e) => e.tr);
  const current = [...tbody.children];
  if (wanted.length !== current.length || wanted.some((tr, i) => tr !== current[i])) tbody.replaceChildren(...wanted);
}

// The message whose journey is asked for; once shown it refreshes with the rest, so new events appear by themselves.
let wantedId;

async function lookUp(id) {
  const journey = await api(`/api/messages/${encodeURIComponent(id)}`);
  // An answer for a message asked for before the one now wanted is not shown.
  if (id !== wantedId) return;
  const summary = $('journey-summary');
  const facts = [
    ['Id', journey.id],
    ['Application', journey.applicationName || journey.applicationId],
    ['Channel', journey.channel],
    ['Direction', journey.direction],
    ['From', journey.source || '—'],
    ['To', journey.destination],
    ['Status', journey.status],
    ['Accepted', time(journey.acceptedAt)],
    ['Carrier hand-overs', journey.attempts],
  ];
  summary.replaceChildren(...facts.flatMap(([k, v]) => [el('dt', k), el('dd', v)]));
  const events = $('journey-events').tBodies[0];
  if (journey.events.length === 0) emptyRow(events, 7, 'No status events recorded');
  else
    events.replaceChildren(
      ...journey.events.map((e) => row([time(e.at), e.status, e.channel, e.carrierId || '—', num(e.attempt), e.errorCode || '—', e.detail || '—'])),
    );
  const callbacks = $('journey-callbacks').tBodies[0];
  if (journey.callbacks.length === 0) emptyRow(callbacks, 7, 'No callback tried for this message by this core');
  else
    callbacks.replaceChildren(
      ...journey.callbacks.map((c) =>
        row([
          time(c.at),
          c.kind,
          c.event || '—',
          c.url,
          num(c.attempt),
          c.httpStatus ? `HTTP ${c.httpStatus}` : c.error || 'no answer',
          c.outcome + (c.error && c.httpStatus ? `: ${c.error}` : ''),
        ]),
      ),
    );
  $('journey').hidden = false;
}

async function refreshAll() {
  await Promise.all([
    panel('binds-error', refreshBinds),
    panel('backlog-error', refreshBacklog),
    panel('callbacks-error', refreshCallbacks),
    panel('campaigns-error', refreshCampaigns),
    wantedId && !$('journey').hidden ? panel('journey-error', () => lookUp(wantedId)) : undefined,
  ]);
  $('refreshed').textContent = `Refreshed at ${new Date().toLocaleTimeString()}`;
}

let timer;
function schedule() {
  clearTimeout(timer);
  if ($('auto').checked) timer = setTimeout(() => refreshAll().finally(schedule), REFRESH_MS);
}

document.addEventListener('DOMContentLoaded', () => {
  $('lookup-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const id = $('message-id').value.trim();
    if (!id) return;
    $('journey').hidden = true;
    wantedId = id;
    panel('journey-error', () => lookUp(id));
  });
  $('auto').addEventListener('change', schedule);
  refreshAll().finally(schedule);
});

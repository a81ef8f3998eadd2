// menu-server's browser page: the menu as a virtualized tree grid over the JSON API.
//
// Only the rows in view (plus a few) are in the DOM; rows are fetched a page at a time as they
// scroll into view and kept in a sparse cache by index. Each write answers a `change` splice
// {at, inserted, removed}, applied to the cache in place (no reload). The session id, and where
// the server offers it the portable expansion (GET /session), are kept in localStorage, so a
// reload, a restarted server or an expired session comes back as the user left it.
//
// GET /app.js serves cells.js (a row's cells), session.js (HTTP, localStorage), search.js (the
// search box, the language) and this file, in that order, as one script (Web/WebAssetFiles.swift).
"use strict";

let ROW_HEIGHT = rowHeight();   // px: --row in app.css (taller on a phone, where a row has two lines)
/// Developer details (the menu's version, the session, the reveal-by-id box) with `#debug` only.
const DEBUG = /(^|[#&])debug(&|$)/.test(location.hash.slice(1));

function rowHeight() {
  return parseFloat(getComputedStyle(document.documentElement).getPropertyValue("--row")) || 36;
}
const PAGE = 200;               // rows per GET /rows
const OVERSCAN = 8;             // rows rendered beyond each edge of the viewport
// Browsers cap element heights; a larger table is scaled into this many pixels of scrolling
// (`#max-scroll-px=N` lowers it, so a test reaches the scaled path on a smaller menu).
const MAX_SCROLL_PX = Math.min(8_000_000, Number(new URLSearchParams(location.hash.slice(1)).get("max-scroll-px")) || Infinity);
const CACHE_ROWS = 6000;        // rows kept at most; the ones far from view are dropped
const STORE_KEY = "menu-server.session";

const state = {
  sessionId: null,
  version: null,
  revision: 0,
  etag: null,
  count: 0,
  rows: new Map(),         // index -> row object of GET /rows
  epoch: 0,                // bumped by every splice: a page fetched before it is stale
  inflight: new Set(),     // "epoch:offset" of pages being fetched
  focus: 0,                // index of the row with tabindex 0
  portable: true,          // whether the server answers GET /session
  bulk: true,              // whether the server answers PUT /expansion
  busy: Promise.resolve(), // writes run one after another
  language: localStorage.getItem(LANGUAGE_KEY) || "", // `?lang=` chosen (search.js); "": Accept-Language
  reloadsSpliced: 0,       // menu reloads applied as their feed entry's splices (not a refetch)
  availability: 0,         // the availability revision every row held shows (availabilitySince)
  availabilityUpdates: 0,  // changes of availability applied as the rows they name (not a refetch)
};

const $ = (id) => document.getElementById(id);
const grid = $("grid"), viewport = $("viewport"), spacer = $("spacer");

// MARK: Rows

/// Sets the table size and what the current session state is.
function adopt(json) {
  if (json.version !== undefined && json.version !== state.version) {
    if (state.version !== null) state.rows.clear();
    state.version = json.version;
  }
  if (json.revision !== undefined) state.revision = json.revision;
  if (json.count !== undefined) setCount(json.count);
}

function setCount(count) {
  state.count = count;
  grid.setAttribute("aria-rowcount", String(count + 1));
  spacer.style.height = Math.min(count * ROW_HEIGHT, MAX_SCROLL_PX) + "px";
  if (state.focus >= count) state.focus = Math.max(0, count - 1);
  const rows = t("rows", count);
  $("footer").lang = textLanguage(document.documentElement.lang);
  $("footer").textContent = !DEBUG ? rows : `${rows} · menu version ${state.version ?? "?"} · `
    + (state.sessionId ? `session ${state.sessionId.slice(0, 6)}…, revision ${state.revision}` : "default expansion (no session yet)");
}

/// Applies a splice: rows before `at` stay, `removed` rows go, the rest shift by inserted - removed.
function splice(change) {
  if (!change) return;
  const { at, inserted, removed } = change;
  const shifted = new Map();
  for (const [index, row] of state.rows) {
    if (index < at) shifted.set(index, row);
    else if (index >= at + removed) { row.index = index + inserted - removed; shifted.set(row.index, row); }
  }
  state.rows = shifted;
  state.epoch += 1;
  if (state.focus >= at + removed) state.focus += inserted - removed;
  else if (state.focus >= at) state.focus = Math.max(0, at - 1);
}

/// A write's answer: its splice, the new count, the written group's new flag. A splice that
/// inserts rows after a group opened that group (a reveal opens the outermost closed one there).
function applyWrite(json) {
  splice(json.change);
  dropReconfigured(json.reconfigured);
  adopt(json);
  for (const row of state.rows.values()) {
    if (row.id === json.id && row.isGroup) row.isExpanded = json.isExpanded;
  }
  const opened = json.change && json.change.inserted > 0 && json.change.removed === 0 && state.rows.get(json.change.at - 1);
  if (opened && opened.isGroup && opened.id !== json.id) opened.isExpanded = true;
  savePortableSoon();
  render();
}

/// The top of the viewport in table pixels, and the scale from scroll pixels (large tables).
function geometry() {
  const total = state.count * ROW_HEIGHT;
  const view = viewport.clientHeight;
  const scrollable = Math.min(total, MAX_SCROLL_PX) - view;
  const ratio = scrollable > 0 && total > MAX_SCROLL_PX ? (total - view) / scrollable : 1;
  return { top: viewport.scrollTop * ratio, view, ratio };
}

function visibleRange() {
  const { top, view } = geometry();
  const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(state.count - 1, Math.ceil((top + view) / ROW_HEIGHT) + OVERSCAN);
  return { first, last };
}

async function fetchPage(offset) {
  const key = state.epoch + ":" + offset;
  if (state.inflight.has(key)) return;
  state.inflight.add(key);
  const epoch = state.epoch;
  try {
    const { json, response } = await api("GET", `/rows?offset=${offset}&limit=${PAGE}`);
    if (json.version !== state.version || json.revision > state.revision) return sync(); // written elsewhere
    if (epoch !== state.epoch) return render(); // spliced meanwhile: its indices are stale
    const availability = json.availabilityRevision ?? 0;
    if (state.rows.size === 0) state.availability = availability;
    else if (availability !== state.availability) sync(); // the rows held before show an older one
    state.etag = response.headers.get("ETag");
    // The titles' language (the browser's Accept-Language chose it): zh-Hant and zh-Hans pick their own glyphs.
    const language = response.headers.get("Content-Language");
    if (language && language !== document.documentElement.lang) {
      document.documentElement.lang = language;
      applyTexts();
      setCount(state.count); // the footer's count in the new language
    }
    json.rows.forEach((row) => state.rows.set(row.index, row));
    if (!grid.classList.contains("dishes") && json.rows.some(isDish)) {
      grid.classList.add("dishes");
      grid.setAttribute("aria-colcount", "5");
    }
    if (json.count !== state.count) setCount(json.count);
    render();
  } catch (error) {
    // A lost session is restored in the writes' queue, once however many pages failed.
    if (error.code === "unknown_session" || error.code === "invalid_session") sync(); else say(explain(error));
  } finally {
    state.inflight.delete(key);
  }
}

/// Drops cached rows far from the viewport once the cache holds more than CACHE_ROWS.
function trim(first, last) {
  if (state.rows.size <= CACHE_ROWS) return;
  for (const index of state.rows.keys()) {
    if (index < first - CACHE_ROWS / 3 || index > last + CACHE_ROWS / 3) state.rows.delete(index);
  }
}

// MARK: Rendering

const elements = new Map(); // index -> row element in the DOM

function render() {
  // The header's columns over the rows': as wide as the rows beside the viewport's scroll bar.
  grid.querySelector(".row.head").style.paddingRight = (viewport.offsetWidth - viewport.clientWidth) + "px";
  const { first, last } = visibleRange();
  const { top } = geometry();
  const hadFocus = grid.contains(document.activeElement) && document.activeElement.classList.contains("row");
  for (const [index, element] of elements) {
    if (index < first || index > last) { element.remove(); elements.delete(index); }
  }
  let missing = null;
  for (let index = first; index <= last; index++) {
    const row = state.rows.get(index);
    if (!row && missing === null) missing = index;
    const key = row ? `${index}|${row.id}|${row.isExpanded}|${row.availability ? JSON.stringify(row.availability) : ""}` : String(index);
    let element = elements.get(index);
    if (!element || element.dataset.key !== key) {
      const fresh = row ? rowElement(row) : placeholder(index);
      fresh.dataset.key = key;
      if (element) element.replaceWith(fresh); else spacer.appendChild(fresh);
      elements.set(index, fresh);
      element = fresh;
    }
    element.style.top = (viewport.scrollTop + index * ROW_HEIGHT - top) + "px";
    element.tabIndex = index === state.focus ? 0 : -1;
  }
  // One row is always in the tab order: the focused one, or, scrolled away from it, the first in view.
  if (!elements.has(state.focus)) {
    const entry = elements.get(Math.min(last, Math.max(first, Math.ceil(top / ROW_HEIGHT))));
    if (entry) entry.tabIndex = 0;
  }
  if (missing !== null) fetchPage(Math.max(0, Math.floor(missing / PAGE) * PAGE));
  else grid.setAttribute("aria-busy", "false");
  showPath(Math.min(state.count - 1, Math.max(0, Math.ceil(top / ROW_HEIGHT))));
  trim(first, last);
  const focused = elements.get(state.focus);
  if (hadFocus && focused && document.activeElement !== focused) focused.focus({ preventScroll: true });
}

// MARK: The path above the rows

/// "Drinks › Beer" above a view that starts inside them: the groups enclosing the first row in
/// view, from the rows held when they are all there, else from `GET /rows?ancestors=true` (one
/// request at a time; the latest first row wins).
let pathShownFor = null;
let pathAsking = false;
let pathWanted = null;
async function showPath(index) {
  const key = `${state.epoch}:${state.revision}:${index}`;
  pathWanted = index;
  if (pathShownFor === key || pathAsking) return;
  const row = state.rows.get(index);
  if (!row) return;
  const chain = [];
  let parent = row.parentId;
  while (parent) {
    const held = [...state.rows.values()].find((candidate) => candidate.id === parent && candidate.index < index);
    if (!held) break;
    chain.unshift(held);
    parent = held.parentId;
  }
  if (!parent) return drawPath(key, chain);
  pathAsking = true;
  try {
    const { json } = await api("GET", `/rows?offset=${index}&limit=1&ancestors=true`);
    drawPath(key, json.ancestors || []);
  } catch { /* the next render asks again */ } finally {
    pathAsking = false;
  }
  if (pathWanted !== index) showPath(pathWanted); // the view moved on meanwhile
}

function drawPath(key, ancestors) {
  pathShownFor = key;
  const path = $("path");
  path.replaceChildren(...ancestors.flatMap((row, position) => {
    const step = span("step", row.title);
    return position === 0 ? [step] : [span("separator", "›"), step];
  }));
}

// MARK: Actions

function say(text) { $("status").textContent = text; }

/// Runs write `body` after the writes before it; a lost session is restored once and retried.
function write(label, body) {
  state.busy = state.busy.then(async () => {
    try {
      applyWrite((await body()).json);
    } catch (error) {
      if (error.code === "unknown_session") {
        await restoreSession(load());
        try { applyWrite((await body()).json); return; } catch (again) { error = again; }
      }
      say(explain(error));
    }
  }).catch((error) => say(explain(error))); // the queue itself never stays rejected
  return state.busy;
}

function toggle(row) {
  return write("Toggle " + row.id, () => api("POST", `/groups/${encodeURIComponent(row.id)}/toggle`));
}

/// Chooses the row (or every leaf under a group) when it is not chosen, else clears it.
function select(row) {
  const selected = row.isGroup ? row.selection !== "all" : !row.selected;
  if (selected && !row.isGroup && row.availability) return say(availabilityText(row.availability));
  return write((selected ? "Select " : "Clear ") + row.id, () =>
    api("PUT", `/nodes/${encodeURIComponent(row.id)}/selection`, { body: { selected } }));
}

/// Drops the rows a selection changed (`reconfigured`: a range and the groups above it) so that
/// they are fetched again with their new checkboxes.
function dropReconfigured(reconfigured) {
  if (!reconfigured) return;
  const { at, count, ancestors } = reconfigured;
  const above = new Set(ancestors);
  for (const [index, row] of [...state.rows]) {
    if ((index >= at && index < at + count) || above.has(row.id)) state.rows.delete(index);
  }
}

function setAll(mode) {
  return write(mode === "expanded" ? "Expand all" : "Collapse all", async () => {
    try {
      return await api("PUT", "/expansion", { body: { all: mode } });
    } catch (error) {
      if (error.code === "not_found" || error.status === 405) {
        state.bulk = false;
        $("expand-all").disabled = $("collapse-all").disabled = true;
        throw new APIError(error.status, error.code, "this server has no PUT /expansion yet");
      }
      throw error;
    }
  });
}

async function reveal(id) {
  await write("Reveal " + id, () => api("POST", `/nodes/${encodeURIComponent(id)}/reveal`));
  try {
    const { json } = await api("GET", `/nodes/${encodeURIComponent(id)}`);
    if (json.index === null) return;
    moveFocus(json.index, { center: true });
    const element = elements.get(json.index);
    if (element) element.classList.add("revealed");
    say(`Showing ${id} (row ${json.index + 1}).`);
  } catch (error) {
    say(explain(error));
  }
}

/// Makes `index` the focused row, scrolling it into view.
function moveFocus(index, { center = false } = {}) {
  if (state.count === 0) return;
  state.focus = Math.max(0, Math.min(state.count - 1, index));
  const { top, view, ratio } = geometry();
  const y = state.focus * ROW_HEIGHT;
  let target = null;
  if (center) target = y - view / 2;
  else if (y < top) target = y;
  else if (y + ROW_HEIGHT > top + view) target = y + ROW_HEIGHT - view;
  if (target !== null) viewport.scrollTop = Math.max(0, target) / ratio;
  render();
  const element = elements.get(state.focus);
  if (element) element.focus({ preventScroll: true });
}

async function parentIndex(row) {
  for (let index = row.index - 1; index >= 0 && index >= row.index - 2000; index--) {
    const candidate = state.rows.get(index);
    if (candidate && candidate.id === row.parentId) return index;
  }
  const { json } = await api("GET", `/nodes/${encodeURIComponent(row.parentId)}`);
  return json.index;
}

async function onKey(event) {
  const row = state.rows.get(state.focus);
  const page = Math.max(1, Math.floor(viewport.clientHeight / ROW_HEIGHT) - 1);
  switch (event.key) {
    case "ArrowDown": moveFocus(state.focus + 1); break;
    case "ArrowUp": moveFocus(state.focus - 1); break;
    case "PageDown": moveFocus(state.focus + page); break;
    case "PageUp": moveFocus(state.focus - page); break;
    case "Home": moveFocus(0); break;
    case "End": moveFocus(state.count - 1); break;
    case "ArrowRight":
      if (row && row.isGroup && !row.isExpanded) await toggle(row);
      else if (row && row.isGroup) moveFocus(state.focus + 1);
      break;
    case "ArrowLeft":
      if (row && row.isGroup && row.isExpanded) await toggle(row);
      else if (row && row.parentId) moveFocus(await parentIndex(row));
      break;
    case "Enter":
      if (row && row.isGroup) await toggle(row);
      break;
    case " ":
      if (row) await select(row);
      break;
    default: return;
  }
  event.preventDefault();
}

// MARK: Keeping up with other tabs and devices

/// Catches up with writes made elsewhere in this session (another tab): GET /count revalidates
/// with the ETag held (304: nothing changed); otherwise GET /changes since the revision held
/// applies their splices (a menu reload's too), or, when the history no longer reaches it or the
/// menu changed with no reload entry, everything is refetched.
let syncQueued = false;
function sync() {
  if (syncQueued) return state.busy;
  syncQueued = true;
  state.busy = state.busy.then(() => { syncQueued = false; return catchUp(); }).catch((error) => say(explain(error)));
  return state.busy;
}

/// Runs in the writes' queue (``sync``), so no splice of a write or of another sync interleaves.
async function catchUp() {
  try {
    const headers = state.etag ? { "If-None-Match": state.etag } : {};
    const counted = await api("GET", "/count", { headers });
    if (counted.notModified) return render();
    state.etag = counted.response.headers.get("ETag");
    const moved = counted.json.version !== state.version || counted.json.revision !== state.revision
      || (counted.json.availabilityRevision ?? 0) !== state.availability;
    if (moved && state.version !== null) {
      try {
        const { json } = await api("GET", `/changes?since=${state.revision}&availabilitySince=${state.availability}`);
        // Another menu is reached by its reload entry's splices; without one, everything is refetched.
        const reached = json.version === state.version
          || json.changes.some((entry) => entry.reload && entry.reload.version === json.version);
        if (reached) {
          for (const entry of json.changes) {
            if (entry.reconfigured) { dropReconfigured(entry.reconfigured); continue; }
            if (!entry.reload) { splice(entry.change); continue; }
            entry.reload.changes.forEach(splice);
            entry.reload.reconfigured.forEach((index) => state.rows.delete(index)); // shown differently now
            state.version = entry.reload.version;
            state.reloadsSpliced += 1;
          }
          // A dish sold out or back: the rows it shows on are fetched again (all, when null).
          if (json.availability) {
            if (json.availability.reconfigured) json.availability.reconfigured.forEach((index) => state.rows.delete(index));
            else state.rows.clear();
            state.availabilityUpdates += 1;
          }
          state.availability = json.availabilityRevision ?? 0;
          adopt(counted.json);
          // A group's own flag may have changed with a splice: refetch what is in view.
          const { first, last } = visibleRange();
          for (let index = first; index <= last; index++) state.rows.delete(index);
          return render();
        }
      } catch (error) {
        if (error.code !== "gone") throw error;
      }
    }
    state.rows.clear();
    state.epoch += 1;
    state.availability = counted.json.availabilityRevision ?? 0;
    adopt(counted.json);
    render();
  } catch (error) {
    await recover(error);
  }
}

/// Writes made elsewhere arrive by themselves while the page is shown: the changes feed as a
/// stream of server-sent events (GET /changes with Accept: text/event-stream, the session's id in
/// its header, read through fetch), whose events the server sends as soon as another tab or
/// device writes this session; each is applied by ``sync`` in the writes' queue. A dropped stream
/// is opened again after the server's retry hint, with Last-Event-ID; a failed one after 1, 2, 4
/// … 30 s; an answer that is not a stream (nothing streams on the way) switches to long polls
/// (GET /changes?since=&wait=25). A page without a session follows the default view (a menu
/// reload); the first write's new session replaces that stream. A hidden page lets go of it,
/// and catches up when shown again.
let following = false;
let streams = true;
let followAbort = null;
async function followChanges() {
  if (following) return;
  following = true;
  let failures = 0;
  let lastEventId = null;
  let lastSession = state.sessionId;
  try {
    // Without a session too: the default view's stream says when the menu is reloaded.
    while (!document.hidden) {
      if (state.sessionId !== lastSession) { lastEventId = null; lastSession = state.sessionId; } // ids are per session
      let delay = 0;
      try {
        delay = streams ? await followStream(lastEventId, (id) => { lastEventId = id; }) : await longPoll();
        failures = 0;
      } catch (error) {
        if (["gone", "unknown_session", "invalid_session"].includes(error.code)) { lastEventId = null; await sync(); }
        if (error.name === "AbortError") continue;
        failures += 1;
        delay = Math.min(30, 2 ** (failures - 1)) * 1000;
      }
      if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  } finally {
    following = false;
  }
}

/// One event stream from the page's revision, until it ends; the milliseconds to wait before the next.
async function followStream(lastEventId, remember) {
  const session = state.sessionId;
  const headers = { Accept: "text/event-stream" };
  if (session) headers["X-Session-Id"] = session;
  if (lastEventId) headers["Last-Event-ID"] = lastEventId;
  followAbort = new AbortController();
  const response = await fetch(withLanguage(`/changes?since=${state.revision}&availabilitySince=${state.availability}`),
    { headers, cache: "no-store", signal: followAbort.signal });
  if (!(response.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
    let json = null;
    try { json = await response.json(); } catch { /* not JSON */ }
    if (response.ok) { streams = false; return 0; } // the plain feed: nothing streams on the way
    const error = json && json.error ? json.error : { code: "http_" + response.status, message: "" };
    throw new APIError(response.status, error.code, error.message);
  }
  let ended = null;
  const retry = await readEventStream(response.body, async (event) => {
    remember(event.id);
    let fields = {};
    try { fields = JSON.parse(event.data); } catch { /* not JSON: nothing to read */ }
    if (event.type === "open" && fields.action !== "none") await sync();
    else if (event.type === "change" && Number(event.id) > state.revision) await sync();
    else if (event.type === "reload" || event.type === "availability") await sync();
    else if (event.type === "end") {
      ended = fields;
      followAbort.abort(); // the server ends the body next: do not wait for it
    }
  }).catch((error) => { if (!ended) throw error; return null; });
  if (ended && ended.retry === false) { remember(null); await sync(); return 0; } // the session ended: sync makes a new one
  if (state.sessionId !== session) remember(null);
  return retry ?? 3000;
}

/// One long poll of the feed (where nothing streams); the milliseconds to wait before the next.
async function longPoll() {
  const since = state.revision;
  const { json } = await api("GET", `/changes?since=${since}&wait=25&availabilitySince=${state.availability}`);
  if (json.version !== state.version || json.revision > state.revision || json.availability) await sync();
  return 0;
}

async function recover(error) {
  if (error.code === "unknown_session" || error.code === "invalid_session") {
    await restoreSession(load());
    state.rows.clear();
    state.epoch += 1;
    return catchUp();
  }
  say(explain(error));
}

// MARK: Start

async function start() {
  const stored = load();
  state.sessionId = stored.sessionId || null;
  // An expansion saved without its id (a restore cut short): make the session it describes.
  if (!state.sessionId && stored.expansion) await restoreSession(stored);
  try {
    const { json, response } = await api("GET", "/count");
    state.etag = response.headers.get("ETag");
    adopt(json);
    if (stored.sessionId && !stored.expansion) say(t("continuing"));
  } catch (error) {
    if (error.code !== "unknown_session" && error.code !== "invalid_session") return say(explain(error));
    await restoreSession(stored);
    const { json } = await api("GET", "/count");
    adopt(json);
  }
  setCount(state.count);
  savePortableSoon();
  render();
  viewport.addEventListener("scroll", () => requestAnimationFrame(render), { passive: true });
  window.addEventListener("resize", () => {
    // A phone turned, or a window narrowed past the two-line layout: the same first row stays on top.
    const height = rowHeight();
    if (height !== ROW_HEIGHT) {
      const first = geometry().top / ROW_HEIGHT;
      ROW_HEIGHT = height;
      setCount(state.count);
      viewport.scrollTop = first * ROW_HEIGHT / geometry().ratio;
    }
    render();
  });
  if (DEBUG) for (const element of document.querySelectorAll(".debug-only")) element.hidden = false;
  window.addEventListener("focus", () => sync());
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) { if (followAbort) followAbort.abort(); } else { sync(); followChanges(); }
  });
  spacer.addEventListener("focusin", (event) => {
    const element = event.target.closest(".row");
    if (element) state.focus = Number(element.dataset.index);
  });
  spacer.addEventListener("keydown", (event) => { onKey(event).catch((error) => say(explain(error))); });
  spacer.addEventListener("click", (event) => {
    const element = event.target.closest(".row");
    if (!element) return;
    const index = Number(element.dataset.index);
    state.focus = index;
    element.focus({ preventScroll: true });
    const row = state.rows.get(index);
    if (row && event.target.closest(".check")) select(row);
    else if (row && row.isGroup && (event.target.closest(".twisty") || event.target.closest(".title"))) toggle(row);
    render();
  });
  applyTexts();
  startSearch();
  loadSummary();
  followChanges();
  $("expand-all").addEventListener("click", () => setAll("expanded"));
  $("collapse-all").addEventListener("click", () => setAll("collapsed"));
  $("new-session").addEventListener("click", async () => {
    const old = state.sessionId;
    state.sessionId = null;
    if (followAbort) followAbort.abort(); // follow the default view from now on
    localStorage.removeItem(STORE_KEY);
    if (old) fetch("/session", { method: "DELETE", headers: { "X-Session-Id": old } }).catch(() => {});
    state.rows.clear();
    state.epoch += 1;
    state.etag = null;
    say(t("backToDefault"));
    await sync();
  });
  $("reveal-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = $("reveal-id").value.trim();
    if (id) reveal(id);
  });
}

window.menuPage = { state, sync }; // for tests and the console
start();

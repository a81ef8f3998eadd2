// menu-server's browser page, its HTTP and its session: every call to the API, and the session
// id and portable expansion kept in localStorage. Served between cells.js and app.js as one
// script (Web/WebAssetFiles.swift); `state` and `say` are app.js's.
"use strict";

// MARK: HTTP

class APIError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

/// `path` with `lang=` when the user chose a language (search.js), else as it is: no hand-set
/// Accept-Language, so the browser's own (navigator.languages) decides.
function withLanguage(path) {
  if (!state.language) return path;
  return path + (path.includes("?") ? "&" : "?") + "lang=" + encodeURIComponent(state.language);
}

async function api(method, path, { body, headers = {}, signal } = {}) {
  const init = { method, headers: { ...headers }, cache: "no-store", signal };
  if (state.sessionId) init.headers["X-Session-Id"] = state.sessionId;
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const response = await fetch(withLanguage(path), init);
  const language = response.headers.get("Content-Language");
  if (language) addLanguage(language);
  if (response.status === 304) return { notModified: true, response };
  const text = await response.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch { /* not JSON: handled below */ }
  if (!response.ok) {
    const error = json && json.error ? json.error : { code: "http_" + response.status, message: text.slice(0, 200) };
    throw new APIError(response.status, error.code, error.message);
  }
  const session = response.headers.get("X-Session-Id");
  if (session && session !== state.sessionId) {
    state.sessionId = session;
    save();
    if (followAbort) followAbort.abort(); // the stream follows the new session from now on
    followChanges();
  }
  return { json, response };
}

/// Reads a `text/event-stream` body (a fetch response's ReadableStream) and calls `onEvent` with
/// each event, `{type, data, id}` (WHATWG HTML §9.2.6: CR, LF or CR LF line ends, `:` comments,
/// `data` lines joined with LF, `id` kept from event to event). Returns the `retry:` hint in
/// milliseconds (or null) once the body ends. `EventSource` itself cannot send X-Session-Id, and
/// the id never goes in a URL, so the page reads the stream through fetch.
async function readEventStream(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "", type = "", data = [], id = "", retry = null;
  for (;;) {
    const { value, done } = await reader.read();
    buffer += done ? "" : value;
    // A CR at the end may be the first half of a CR LF: it ends its line only with what follows
    // (or with the end of the body).
    const carry = !done && buffer.endsWith("\r") ? "\r" : "";
    const lines = (carry ? buffer.slice(0, -1) : buffer).split(/\r\n|\r|\n/);
    buffer = lines.pop() + carry; // the last piece is a line cut short: kept for the next chunk
    for (const line of lines) {
      if (line === "") {
        if (data.length) await onEvent({ type: type || "message", data: data.join("\n"), id });
        type = ""; data = [];
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let field = colon < 0 ? "" : line.slice(colon + 1);
        if (field.startsWith(" ")) field = field.slice(1);
        if (name === "event") type = field;
        else if (name === "data") data.push(field);
        else if (name === "id" && !field.includes("\0")) id = field;
        else if (name === "retry" && /^\d+$/.test(field)) retry = Number(field);
      }
    }
    if (done) return retry; // an event not ended by a blank line is dropped, as the standard says
  }
}

// MARK: Session and portable state

function load() {
  try { return JSON.parse(localStorage.getItem(STORE_KEY)) || {}; } catch { return {}; }
}

function save(extra = {}) {
  const stored = { ...load(), sessionId: state.sessionId, ...extra };
  if (!state.sessionId) delete stored.sessionId;
  localStorage.setItem(STORE_KEY, JSON.stringify(stored));
}

let portableTimer = null;
/// Keeps the session's expansion (ids, portable across restarts and menu versions) beside its id.
function savePortableSoon() {
  if (!state.portable || !state.sessionId) return;
  clearTimeout(portableTimer);
  portableTimer = setTimeout(async () => {
    try {
      // The id goes in X-Session-Id (api adds it), never in the URL: logs and history keep URLs.
      const { json } = await api("GET", "/session");
      save({ expansion: json.expansion, version: json.version });
    } catch (error) {
      // A server without GET /session (405 or 404 not_found): keep the id only.
      if (error.status === 405 || error.code === "not_found") state.portable = false;
    }
  }, 250);
}

/// A new session in the expansion the browser saved, or none (the menu's default until a write).
/// A failed restore (the server unreachable, or the page leaving mid-request) leaves localStorage
/// as it was, so the next start tries again with the same expansion.
async function restoreSession(stored) {
  state.sessionId = null;
  if (stored.expansion) {
    try {
      const { json } = await api("POST", "/sessions", { body: stored.expansion });
      state.sessionId = json.sessionId;
      const ignored = json.ignored && json.ignored.length ? ` (${json.ignored.length} groups no longer in the menu)` : "";
      say(t("restored") + (DEBUG ? ignored : ""));
    } catch (error) {
      say(t("notRestored"));
      return;
    }
  }
  save();
}

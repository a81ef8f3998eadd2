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
  if (session && session !== state.sessionId) { state.sessionId = session; save(); followChanges(); }
  return { json, response };
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
      say(`Restored your expansion in a new session${ignored}.`);
    } catch (error) {
      say(`Could not restore your expansion: ${error.message}`);
      return;
    }
  }
  save();
}

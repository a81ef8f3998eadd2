// menu-server's browser page, its search box and language choice. Typing asks GET /search?q=
// (debounced, the request for the text before aborted, an answer for older text dropped) and
// lists the matches, each as its path (Drinks › Beer › Tsingtao), in a listbox under the box;
// ↑/↓ choose, Enter or a click reveals the match (POST /nodes/{id}/reveal) and focuses its row,
// Escape or an empty box closes the list. The language select sets `?lang=` on every request
// (session.js) and is kept in localStorage; left at "Browser default", the browser's Accept-Language
// (navigator.languages) decides. The select lists the menu's locales (GET /menu) and shows for a
// menu with locales, each named in its own language; the page's title is the menu's own, in the
// locale chosen. Served between session.js and app.js (Web/WebAssetFiles.swift).
"use strict";

const SEARCH_DEBOUNCE_MS = 150;
const SEARCH_LIMIT = 20;
const LANGUAGE_KEY = "menu-server.language";

const search = {
  timer: null,
  controller: null,   // aborts the request in flight when the text changes
  asked: 0,           // sequence number of the last search asked; older answers are dropped
  matches: [],        // the matches listed, in order
  shown: null,        // the query whose answer is listed, null when the list is closed
  active: -1,         // index of the highlighted match (aria-activedescendant), -1 for none
};

function startSearch() {
  const box = $("search-box");
  box.addEventListener("input", () => searchSoon(box.value));
  box.addEventListener("keydown", (event) => onSearchKey(event));
  $("search-panel").addEventListener("mousedown", (event) => event.preventDefault()); // keep the box focused
  $("search-results").addEventListener("click", (event) => {
    const option = event.target.closest("[role=option]");
    if (option) choose(Number(option.dataset.position));
  });
  startLanguage();
}

function searchSoon(text) {
  clearTimeout(search.timer);
  if (search.controller) search.controller.abort();
  search.controller = null;
  const query = text.trim();
  if (!query) return closeMatches();
  search.timer = setTimeout(() => runSearch(query), SEARCH_DEBOUNCE_MS);
}

/// Asks the server now; resolves once the list shows this query's answer (or it was superseded).
async function runSearch(query) {
  clearTimeout(search.timer);
  if (search.controller) search.controller.abort();
  const controller = new AbortController();
  search.controller = controller;
  const asked = ++search.asked;
  try {
    const { json } = await api("GET", `/search?q=${encodeURIComponent(query)}&limit=${SEARCH_LIMIT}`, { signal: controller.signal });
    if (asked !== search.asked) return;
    showMatches(json, query);
  } catch (error) {
    if (asked !== search.asked || error.name === "AbortError") return;
    showMatches({ matches: [], total: 0 }, query);
    if (error.code === "unknown_session") sync(); // restores the session (app.js); the next key searches in it
    say(explain(error));
  } finally {
    if (search.controller === controller) search.controller = null;
  }
}

function showMatches(json, query) {
  const list = $("search-results");
  search.matches = json.matches;
  search.shown = query;
  list.replaceChildren(...json.matches.map((match, position) => matchElement(match, position)));
  // Outside the listbox, which holds options only.
  $("search-note").textContent = !json.matches.length ? t("noMatch")
    : json.total > json.matches.length ? t("someMatches", json.matches.length, json.total) : "";
  $("search-note").lang = textLanguage(document.documentElement.lang);
  $("search-panel").hidden = false;
  $("search-box").setAttribute("aria-expanded", "true");
  setActive(json.matches.length ? 0 : -1);
  say(json.matches.length ? t("matchesFound", json.total) : t("noMatch"));
}

function matchElement(match, position) {
  const option = document.createElement("li");
  option.id = "match-" + position;
  option.setAttribute("role", "option");
  option.dataset.position = String(position);
  option.dataset.id = match.id;
  for (const ancestor of match.path) option.append(span("ancestor", ancestor.title), span("separator", " › "));
  option.append(span(match.isGroup ? "title group" : "title", match.title));
  return option;
}

function setActive(position) {
  search.active = position;
  const box = $("search-box");
  for (const option of $("search-results").querySelectorAll("[role=option]")) {
    const selected = Number(option.dataset.position) === position;
    option.setAttribute("aria-selected", String(selected));
    if (selected) option.scrollIntoView({ block: "nearest" });
  }
  if (position >= 0) box.setAttribute("aria-activedescendant", "match-" + position);
  else box.removeAttribute("aria-activedescendant");
}

function closeMatches() {
  clearTimeout(search.timer);
  if (search.controller) search.controller.abort();
  search.controller = null;
  search.asked += 1; // an answer still on its way is for a list no longer shown
  search.matches = [];
  search.shown = null;
  $("search-panel").hidden = true;
  $("search-results").replaceChildren();
  $("search-box").setAttribute("aria-expanded", "false");
  setActive(-1);
}

async function onSearchKey(event) {
  const count = search.matches.length;
  switch (event.key) {
    case "ArrowDown": if (count) setActive((search.active + 1) % count); break;
    case "ArrowUp": if (count) setActive((search.active - 1 + count) % count); break;
    case "Escape":
      $("search-box").value = "";
      closeMatches();
      break;
    case "Enter": {
      const query = event.target.value.trim();
      if (!query) return;
      event.preventDefault();
      // Typed faster than the debounce: ask now, then take the first match.
      if (search.shown !== query) await runSearch(query);
      if (search.matches.length) choose(Math.max(0, search.active));
      return;
    }
    default: return;
  }
  event.preventDefault();
}

/// Reveals the match at `position` in the tree (app.js's reveal focuses its row), closes the list
/// and empties the box for the next search.
function choose(position) {
  const match = search.matches[position];
  if (!match) return;
  closeMatches();
  $("search-box").value = "";
  return reveal(match.id);
}

// MARK: Language

/// The select's choice, kept in localStorage, goes as `?lang=` on every request from then on.
function startLanguage() {
  const select = $("language");
  if (state.language) addLanguage(state.language);
  select.value = state.language;
  select.addEventListener("change", () => {
    state.language = select.value;
    if (state.language) localStorage.setItem(LANGUAGE_KEY, state.language); else localStorage.removeItem(LANGUAGE_KEY);
    state.rows.clear();
    state.epoch += 1;
    state.etag = null;
    if ($("search-box").value.trim()) runSearch($("search-box").value.trim());
    loadSummary();
    sync();
  });
}

/// The menu's own title and languages (GET /menu): the page's title and heading, and one option
/// per locale, each named in its own language. A menu without locales shows no select.
async function loadSummary() {
  try {
    const { json } = await api("GET", "/menu");
    const title = json.title || t("menu");
    document.title = title;
    $("title").textContent = title;
    if (json.locale) $("title").lang = json.locale;
    // The menu's order, the default first: each appended again after the ones before it.
    const select = $("language");
    for (const tag of json.locales || []) {
      addLanguage(tag);
      select.append([...select.options].find((option) => option.value === tag));
    }
  } catch (error) {
    say(explain(error));
  }
}

/// Shows the select (the menu has locales: an answer named one) with `tag` among its choices.
function addLanguage(tag) {
  const select = $("language");
  select.hidden = select.labels[0].hidden = false;
  if (!tag || [...select.options].some((option) => option.value === tag)) return;
  const option = document.createElement("option");
  option.value = tag;
  let name = tag;
  try { name = new Intl.DisplayNames([tag], { type: "language" }).of(tag) || tag; } catch { /* not a tag Intl knows */ }
  option.textContent = name;
  option.lang = tag; // read in its own language
  select.append(option);
}

// The cells of one row of menu-server's tree grid: a dish's price, spiciness and vegetarian
// mark, a group's child count, any other attribute as a chip. Served in front of app.js as one
// script (Web/WebAssetFiles.swift), so these functions are app.js's own.
"use strict";

function cell(className, ...children) {
  const element = document.createElement("div");
  element.className = "cell " + className;
  element.setAttribute("role", "gridcell");
  element.append(...children);
  return element;
}

function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

function baseRow(index) {
  const element = document.createElement("div");
  element.className = "row";
  element.setAttribute("role", "row");
  element.setAttribute("aria-rowindex", String(index + 2));
  element.dataset.index = String(index);
  return element;
}

function placeholder(index) {
  const element = baseRow(index);
  element.classList.add("placeholder");
  element.setAttribute("aria-busy", "true");
  element.append(cell("name"), cell("price"), cell("spicy"), cell("veg"), cell("more"));
  return element;
}

const known = new Set(["price", "currency", "spicy", "vegetarian", "en"]);
const isDish = (row) => row.attributes && ["price", "spicy", "vegetarian"].some((key) => key in row.attributes);

function rowElement(row) {
  const element = baseRow(row.index);
  const a = row.attributes || {};
  element.dataset.id = row.id;
  // Where the row sits, for a screen reader that sees only the rows in the DOM.
  element.setAttribute("aria-level", String(row.level ?? row.depth + 1));
  if (row.posInSet) element.setAttribute("aria-posinset", String(row.posInSet));
  if (row.setSize) element.setAttribute("aria-setsize", String(row.setSize));
  if (row.isGroup) {
    element.classList.add("group");
    element.setAttribute("aria-expanded", String(row.isExpanded));
  }
  // The title and its English name in one label: cut with "…" on one line where the column is
  // wide, over two lines on a phone, where a long name would otherwise have no way to be read.
  const label = span("label");
  label.append(span("title", row.title));
  const name = cell("name", span("twisty"), checkbox(row), label);
  name.style.paddingLeft = (10 + row.depth * 22) + "px";
  element.style.setProperty("--indent", (10 + row.depth * 22 + 46) + "px"); // a phone's second line, under the title
  name.firstChild.setAttribute("aria-hidden", "true");
  if (typeof a.en === "string" && a.en !== row.title) {
    const english = span("subtitle", a.en);
    english.lang = "en"; // the English name beside a Chinese title is read with an English voice
    label.append(" ", english);
  }
  if (row.isGroup) name.append(span("count", String(row.childCount)));
  if (row.availability) {
    element.classList.add("unavailable");
    const mark = span("availability", availabilityText(row.availability));
    mark.lang = textLanguage(document.documentElement.lang);
    mark.title = mark.textContent; // the whole of it where the cell cuts it short
    name.append(mark);
  }
  element.append(name, cell("price", price(a)), cell("spicy", spicy(a.spicy)), cell("veg", vegetarian(a.vegetarian)), cell("more", ...details(a)));
  return element;
}

/// The row's checkbox: a leaf's choice, or a group's over every leaf under it, however much of it
/// was never opened (`mixed` when some are chosen). Named by the row's title; Space or a click
/// changes it. Disabled on a leaf that cannot be chosen now.
function checkbox(row) {
  const box = span("check");
  box.setAttribute("role", "checkbox");
  const checked = row.isGroup
    ? (row.selection === "all" ? "true" : row.selection === "some" ? "mixed" : "false")
    : String(Boolean(row.selected));
  box.setAttribute("aria-checked", checked);
  box.setAttribute("aria-label", row.title);
  if (row.isGroup && row.selectedCount) box.title = `${row.selectedCount} / ${row.selectableCount}`;
  if (!row.isGroup && row.availability && !row.selected) box.setAttribute("aria-disabled", "true");
  return box;
}

/// "Sold out · back at 19:30 · the kitchen", "Closed · opens at 07:00" in the reader's locale:
/// the time alone today, with the day otherwise.
function availabilityText(availability) {
  const closed = availability.state === "closed";
  const parts = [availability.state === "sold_out" ? t("soldOut") : closed ? t("closed") : t("paused")];
  const until = availability.until ? new Date(availability.until) : null;
  if (until && !Number.isNaN(until.getTime())) {
    const today = until.toDateString() === new Date().toDateString();
    const options = today ? { hour: "numeric", minute: "2-digit" } : { weekday: "short", day: "numeric", month: "short", hour: "numeric", minute: "2-digit" };
    const time = new Intl.DateTimeFormat(undefined, options).format(until);
    parts.push(`${t(closed ? "opens" : "back")} ${today ? t("at") + " " : ""}${time}`);
  }
  if (availability.reason) parts.push(availability.reason);
  return parts.join(" · ");
}

function price(a) {
  if (typeof a.price !== "number") return "";
  if (typeof a.currency === "string" && /^[A-Z]{3}$/.test(a.currency)) {
    try { return new Intl.NumberFormat(undefined, { style: "currency", currency: a.currency }).format(a.price); } catch { /* unknown code */ }
  }
  return String(a.price) + (a.currency ? " " + a.currency : "");
}

function spicy(level) {
  if (typeof level !== "number") return "";
  const wrap = span("peppers");
  wrap.setAttribute("role", "img");
  wrap.setAttribute("aria-label", level === 0 ? t("notSpicy") : t("spicyLevel", level));
  wrap.title = wrap.getAttribute("aria-label");
  for (let i = 0; i < Math.max(3, level); i++) wrap.append(span(i < level ? "pepper" : "pepper off"));
  return wrap;
}

function vegetarian(value) {
  return value === true ? span("leaf", t("isVegetarian")) : "";
}

/// Any other attribute as a person reads it: a flag true as its name ("alcoholic"), false as
/// nothing, a name ending in a unit as a quantity ("500 ml"), else "name: value".
function details(a) {
  return Object.keys(a).filter((key) => !known.has(key) && a[key] !== false && a[key] !== null).map((key) => {
    const value = a[key];
    if (key === "badge") {
      const chip = span("chip badge", String(value));
      chip.setAttribute("aria-label", `badge ${value}`);
      return chip;
    }
    return span("chip", readable(key, value));
  });
}

const UNITS = [["Ml", "ml"], ["Grams", "g"], ["Kcal", "kcal"], ["Cl", "cl"]];

function readable(key, value) {
  if (value === true) return words(key);
  if (typeof value === "number") {
    const unit = UNITS.find(([suffix]) => key.endsWith(suffix) && key.length > suffix.length);
    if (unit) return `${value.toLocaleString(document.documentElement.lang || undefined)} ${unit[1]}`;
  }
  return `${words(key)}: ${typeof value === "object" ? JSON.stringify(value) : value}`;
}

/// `volumeMl` → "volume ml", `isNew` → "is new": a camelCase name as words.
function words(key) {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
}

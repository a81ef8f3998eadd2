// The page's own words (buttons, labels, column headers, messages) in the reader's language: the
// language the menu's titles came in (the answers' Content-Language) when these texts have it
// (English, traditional and simplified Chinese), else English. Each element that shows one gets
// `lang` set to the words' language, so a screen reader never reads English with a Chinese voice.
// Messages say what happened in a customer's words; the server's own message is for #debug.
// Served first of the page's script (Web/WebAssetFiles.swift).
"use strict";

const TEXTS = {
  en: {
    menu: "Menu", actions: "Menu actions", expandAll: "Expand all", collapseAll: "Collapse all", reset: "Reset",
    resetHint: "Forget this browser's expansion and start from the menu's default",
    search: "Search", searchHint: "a dish or a group, e.g. tofu", matches: "Matches", language: "Language",
    browserDefault: "Browser default", path: "Where the first row is",
    name: "Name", price: "Price", spicy: "Spicy", vegetarian: "Vegetarian", details: "Details",
    rows: (n) => `${n.toLocaleString()} ${n === 1 ? "row" : "rows"}`,
    matchesFound: (n) => `${n} ${n === 1 ? "match" : "matches"}.`, noMatch: "No match",
    someMatches: (shown, total) => `${shown} of ${total} matches: type more to narrow them`,
    continuing: "Continuing your session.", backToDefault: "Back to the menu's default expansion.",
    restored: "Your menu came back as you left it.", notRestored: "Your earlier view could not be restored; this is the menu as it starts.",
    unreachable: "The menu can't be reached; trying again.", busy: "The menu is busy; trying again in a moment.",
    failed: "That didn't work. Please try again.", changed: "The menu changed meanwhile; showing it as it is now.",
    soldOut: "Sold out", paused: "Paused", closed: "Closed", opens: "opens", back: "back", at: "at",
    notSpicy: "not spicy", spicyLevel: (level) => `spicy, ${level} of 3`, isVegetarian: "vegetarian",
  },
  "zh-Hant": {
    menu: "菜單", actions: "菜單操作", expandAll: "全部展開", collapseAll: "全部收合", reset: "重設",
    resetHint: "忘記此瀏覽器的展開狀態，回到菜單預設",
    search: "搜尋", searchHint: "菜名或分類，例如 豆腐", matches: "搜尋結果", language: "語言",
    browserDefault: "瀏覽器預設", path: "第一列所在位置",
    name: "名稱", price: "價格", spicy: "辣度", vegetarian: "素食", details: "詳情",
    rows: (n) => `${n.toLocaleString()} 列`, matchesFound: (n) => `找到 ${n} 項。`, noMatch: "沒有符合的項目",
    someMatches: (shown, total) => `顯示 ${total} 項中的 ${shown} 項：請輸入更多字縮小範圍`,
    continuing: "繼續你的工作階段。", backToDefault: "已回到菜單的預設展開。",
    restored: "菜單已恢復成你離開時的樣子。", notRestored: "無法恢復先前的畫面；這是菜單的初始狀態。",
    unreachable: "暫時無法連線到菜單，正在重試。", busy: "菜單忙碌中，稍後重試。",
    failed: "操作未完成，請再試一次。", changed: "菜單剛剛有變動，已顯示最新內容。",
    soldOut: "已售完", paused: "暫停供應", closed: "未營業", opens: "開始供應", back: "恢復供應", at: "於",
    notSpicy: "不辣", spicyLevel: (level) => `辣度 ${level}／3`, isVegetarian: "素食",
  },
  "zh-Hans": {
    menu: "菜单", actions: "菜单操作", expandAll: "全部展开", collapseAll: "全部收起", reset: "重置",
    resetHint: "忘记此浏览器的展开状态，回到菜单默认",
    search: "搜索", searchHint: "菜名或分类，例如 豆腐", matches: "搜索结果", language: "语言",
    browserDefault: "浏览器默认", path: "第一行所在位置",
    name: "名称", price: "价格", spicy: "辣度", vegetarian: "素食", details: "详情",
    rows: (n) => `${n.toLocaleString()} 行`, matchesFound: (n) => `找到 ${n} 项。`, noMatch: "没有匹配的项目",
    someMatches: (shown, total) => `显示 ${total} 项中的 ${shown} 项：请输入更多字缩小范围`,
    continuing: "继续你的会话。", backToDefault: "已回到菜单的默认展开。",
    restored: "菜单已恢复成你离开时的样子。", notRestored: "无法恢复之前的画面；这是菜单的初始状态。",
    unreachable: "暂时无法连接到菜单，正在重试。", busy: "菜单繁忙，稍后重试。",
    failed: "操作未完成，请再试一次。", changed: "菜单刚刚有变动，已显示最新内容。",
    soldOut: "已售罄", paused: "暂停供应", closed: "未营业", opens: "开始供应", back: "恢复供应", at: "于",
    notSpicy: "不辣", spicyLevel: (level) => `辣度 ${level}／3`, isVegetarian: "素食",
  },
};

/// The texts' language for the page's language `tag`: zh-Hant for zh-Hant, zh-TW, zh-HK and
/// zh-MO; zh-Hans for any other Chinese; else English.
function textLanguage(tag) {
  const lower = (tag || "").toLowerCase();
  if (!lower.startsWith("zh")) return "en";
  return /^zh-(hant|tw|hk|mo)\b/.test(lower) ? "zh-Hant" : "zh-Hans";
}

/// `key`'s words in the page's language (a function's called with `values`).
function t(key, ...values) {
  const text = TEXTS[textLanguage(document.documentElement.lang)][key] ?? TEXTS.en[key];
  return typeof text === "function" ? text(...values) : text;
}

/// Gives every element marked in index.html its words anew: `data-text` its text,
/// `data-text-placeholder`, `data-text-label` (aria-label) and `data-text-title` those
/// attributes; `lang` says their language. Called when the page's language changes.
function applyTexts() {
  const language = textLanguage(document.documentElement.lang);
  for (const element of document.querySelectorAll("[data-text], [data-text-placeholder], [data-text-label], [data-text-title]")) {
    if (element.dataset.text) element.textContent = t(element.dataset.text);
    if (element.dataset.textPlaceholder) element.placeholder = t(element.dataset.textPlaceholder);
    if (element.dataset.textLabel) element.setAttribute("aria-label", t(element.dataset.textLabel));
    if (element.dataset.textTitle) element.title = t(element.dataset.textTitle);
    element.lang = language;
  }
}

/// What to tell a customer about `error`: the menu unreachable (a network failure, a proxy's
/// 502-504), busy (429, 503) or a write that did not work; with `#debug`, the server's own words too.
function explain(error) {
  const status = error && error.status;
  const words = !status || status === 502 || status === 504 ? t("unreachable")
    : status === 429 || status === 503 ? t("busy") : status === 409 || status === 412 ? t("changed") : t("failed");
  return DEBUG && error && error.message ? `${words} (${error.code || error.name}: ${error.message})` : words;
}

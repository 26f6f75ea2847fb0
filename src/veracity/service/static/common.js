// Shared by the pages: the API key (session storage only), labels in English and Chinese,
// requests with the key, and building elements. Text from the server is only ever set as
// textContent, never as HTML: documents are data, not markup.
"use strict";

const KEY_STORE = "veracity.key";
const LANG_STORE = "veracity.lang";

// The labels (static/labels.json) come inside the page, in the script element "labels".
const LABELS = JSON.parse((document.getElementById("labels") || {}).textContent || '{"en": {}}');

function language() {
  const stored = sessionStorage.getItem(LANG_STORE);
  if (stored === "en" || stored === "zh") return stored;
  return (navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
}

function t(name, values) {
  const table = LABELS[language()] || LABELS.en;
  let text = name in table ? table[name] : name in LABELS.en ? LABELS.en[name] : name;
  for (const [key, value] of Object.entries(values || {})) text = text.replace(`{${key}}`, String(value));
  return text;
}

function applyLabels() {
  const lang = language();
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-placeholder]")) {
    node.placeholder = t(node.dataset.i18nPlaceholder);
  }
  const toggle = document.getElementById("language");
  if (toggle) toggle.textContent = lang === "zh" ? "English" : "中文";
}

function pageWords(start, end) {
  if (start === null || start === undefined) return "";
  return end === null || end === undefined || end === start ? t("page_one", { a: start })
    : t("page_range", { a: start, b: end });
}

function versionWords(range) {
  const [low, high] = range || [null, null];
  if (low && high) return low === high ? low : t("versions_between", { a: low, b: high });
  if (low) return t("versions_from", { a: low });
  if (high) return t("versions_to", { b: high });
  return "";
}

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function storedKey() {
  return sessionStorage.getItem(KEY_STORE) || "";
}

function showKeyState() {
  const key = storedKey();
  const state = document.getElementById("key-state");
  state.textContent = key ? t("key_set") + key.slice(0, 15) + "…" : t("key_none");
  document.getElementById("key-forget").hidden = !key;
  document.getElementById("key-form").hidden = Boolean(key);
}

// onLanguage defaults to onChange; a page whose data does not depend on the language passes
// a cheaper one, so switching does not refetch and leave stale labels until the reply.
function setupKey(onChange, onLanguage = onChange) {
  document.getElementById("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = document.getElementById("key");
    const value = input.value.trim();
    if (!value) return;
    sessionStorage.setItem(KEY_STORE, value);
    input.value = "";
    showKeyState();
    if (onChange) onChange();
  });
  document.getElementById("key-forget").addEventListener("click", () => {
    sessionStorage.removeItem(KEY_STORE);
    showKeyState();
    if (onChange) onChange();
  });
  const toggle = document.getElementById("language");
  if (toggle) {
    toggle.addEventListener("click", () => {
      sessionStorage.setItem(LANG_STORE, language() === "zh" ? "en" : "zh");
      applyLabels();
      showKeyState();
      if (onLanguage) onLanguage();
    });
  }
  applyLabels();
  showKeyState();
}

function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message || "";
  box.hidden = !message;
}

async function api(path, options) {
  const headers = Object.assign({ Authorization: `Bearer ${storedKey()}` }, (options || {}).headers || {});
  let response;
  try {
    response = await fetch(path, Object.assign({}, options || {}, { headers }));
  } catch (_) {  // no answer at all: the browser's own words ("Failed to fetch") say nothing useful
    throw new Error(t("error_network"));
  }
  if (!response.ok) {
    let detail = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      detail = `${response.status}: ${body.detail || JSON.stringify(body)}`;
    } catch (_) { /* not JSON */ }
    const error = new Error(detail);
    error.status = response.status;
    throw error;
  }
  return response;
}

// Markdown pipe tables in a text, as [{table: [header, ...rows], start, end}] and the plain runs
// between them: a claim that is a table row carries its header and separator rows, and reads
// best as a table. Cells are text; nothing is parsed as HTML.
const TABLE_SEPARATOR = /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/;

function splitCells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((cell) => cell.trim());
}

function textParts(text) {
  const parts = [];
  const lines = text.split("\n");
  let at = 0;
  let plainStart = 0;
  for (let i = 0; i < lines.length; i++) {
    const isHead = lines[i].trim().startsWith("|") && i + 1 < lines.length &&
      TABLE_SEPARATOR.test(lines[i + 1].trim());
    if (!isHead) { at += lines[i].length + 1; continue; }
    if (at > plainStart) parts.push({ text: text.slice(plainStart, at), start: plainStart });
    const rows = [{ cells: splitCells(lines[i]), start: at, end: at + lines[i].length }];
    let end = at + lines[i].length + 1 + lines[i + 1].length;
    let j = i + 2;
    let rowAt = end + 1;
    while (j < lines.length && lines[j].trim().startsWith("|")) {
      rows.push({ cells: splitCells(lines[j]), start: rowAt, end: rowAt + lines[j].length });
      end = rowAt + lines[j].length;
      rowAt = end + 1;
      j++;
    }
    parts.push({ table: rows, start: at, end });
    at = rowAt;
    plainStart = Math.min(at, text.length);
    i = j - 1;
  }
  if (plainStart < text.length) parts.push({ text: text.slice(plainStart), start: plainStart });
  return parts;
}

// A table element for rows of cells; a row overlapping one of `spans` is marked.
function tableOf(rows, spans) {
  const marked = (row) => (spans || []).some(([s, e]) => s < row.end && row.start < e);
  const head = el("tr", {}, ...rows[0].cells.map((cell) => el("th", {}, cell)));
  const body = rows.slice(1).map((row) => el("tr", marked(row) ? { class: "marked" } : {},
    ...row.cells.map((cell) => el("td", {}, cell))));
  return el("div", { class: "table-wrap" }, el("table", { class: "quoted" }, el("thead", {}, head),
    el("tbody", {}, ...body)));
}

// Shared by the pages: the API key (session storage only), labels in English and Chinese,
// requests with the key, and building elements. Text from the server is only ever set as
// textContent, never as HTML: documents are data, not markup.
"use strict";

const KEY_STORE = "veracity.key";
const LANG_STORE = "veracity.lang";

const LABELS = {
  en: {
    nav_ask: "Ask", nav_operator: "Operator", key_label: "API key", key_use: "Use key",
    key_forget: "Forget key", key_none: "No key yet: paste the key an operator gave you.",
    key_set: "Key in use for this tab: ", question_label: "Question", options: "Options",
    version: "Product version", as_of: "As of", explain: "Explain (operator keys)", ask: "Ask",
    sources: "Sources", close: "Close", explain_title: "Candidates and decision",
    status_answer: "Answer", status_partial: "Partial answer", status_abstain: "Abstain",
    status_pending: "Looking for evidence…", cache_hit: "from cache", cache_miss: "computed",
    page: "page", neighbours: "neighbouring text", documents: "Documents", refresh: "Refresh",
    withdraw: "Withdraw", confirm_withdraw: "Withdraw {id}? No answer will cite it again.",
    withdrawn: "Withdrawn: {id}", not_operator: "This key is not an operator key.",
    col_id: "id", col_title: "title", col_status: "status", col_visibility: "visibility",
    col_trust: "trust", col_chunks: "chunks", col_action: "",
    summary: "{n} documents · cache hit rate {rate} · index version {version}",
    new_conversation: "New conversation", history: "Earlier in this conversation",
    asked_as: "Asked as: {question}", feedback_ask: "Was this answer right?",
    feedback_comment: "What was wrong? (optional)", feedback_send: "Send", feedback_up: "Yes",
    feedback_down: "No, say what was wrong",
    feedback_thanks: "Thank you: recorded.", feedback: "Thumbs down", col_rated: "rated",
    col_question: "question", col_cited: "cited", col_comment: "comment",
    col_source: "source", col_heading: "heading", col_page: "page", col_fused: "fused",
    col_reranked: "reranked", col_gate: "gate / evidence", revision_short: "rev {n}",
    page_one: "p. {a}", page_range: "pp. {a}–{b}", versions_from: "{a} and later",
    versions_to: "up to {b}", versions_between: "{a}–{b}", version_hint: "{versions} · all",
    as_of_hint: "now · {date}", state_active: "active", state_retired: "retired",
    state_withdrawn: "withdrawn", upload: "Add documents", upload_send: "Upload and ingest",
    upload_done: "added {added} · revised {revised} · unchanged {unchanged} · skipped {skipped} · rejected {rejected} · chunks {chunks}",
    upload_defaults: "took default governance: {fields}", col_defaults: "defaults",
    quarantine: "Held back: text that gives orders", col_signals: "signals", col_excerpt: "text",
    keys: "API keys", key_name: "name", key_roles: "roles, comma-separated", key_operator: "operator",
    key_create: "Create key", key_secret: "The new key, shown this once: {secret}", col_name: "name",
    col_roles: "roles", col_created: "created", col_revoked: "revoked", revoke: "Revoke",
    confirm_revoke: "Revoke the key {name}? It stops working at once.", yes: "yes", no: "no",
  },
  zh: {
    nav_ask: "提问", nav_operator: "运维", key_label: "API 密钥", key_use: "使用密钥",
    key_forget: "清除密钥", key_none: "尚未设置密钥：请粘贴运维人员给你的密钥。",
    key_set: "本标签页使用的密钥：", question_label: "问题", options: "选项",
    version: "产品版本", as_of: "时间点", explain: "解释（运维密钥）", ask: "提问",
    sources: "来源", close: "关闭", explain_title: "候选与决策",
    status_answer: "回答", status_partial: "部分回答", status_abstain: "不作答",
    status_pending: "正在查找证据…", cache_hit: "来自缓存", cache_miss: "新计算",
    page: "页", neighbours: "上下文", documents: "文档", refresh: "刷新",
    withdraw: "撤回", confirm_withdraw: "撤回 {id}？之后的回答不会再引用它。",
    withdrawn: "已撤回：{id}", not_operator: "此密钥不是运维密钥。",
    col_id: "编号", col_title: "标题", col_status: "状态", col_visibility: "可见性",
    col_trust: "可信度", col_chunks: "分块", col_action: "",
    summary: "{n} 个文档 · 缓存命中率 {rate} · 索引版本 {version}",
    new_conversation: "新对话", history: "本次对话的前几轮",
    asked_as: "按此提问：{question}", feedback_ask: "这个回答对吗？",
    feedback_comment: "哪里不对？（可选）", feedback_send: "发送", feedback_up: "对",
    feedback_down: "不对，说明原因",
    feedback_thanks: "谢谢，已记录。", feedback: "差评", col_rated: "评价时间",
    col_question: "问题", col_cited: "引用", col_comment: "意见",
    col_source: "来源", col_heading: "标题路径", col_page: "页码", col_fused: "融合分",
    col_reranked: "重排分", col_gate: "闸门 / 证据", revision_short: "第 {n} 版",
    page_one: "第 {a} 页", page_range: "第 {a}–{b} 页", versions_from: "{a} 及以后",
    versions_to: "{b} 及以前", versions_between: "{a}–{b}", version_hint: "{versions} · 全部",
    as_of_hint: "现在 · {date}", state_active: "有效", state_retired: "已退役",
    state_withdrawn: "已撤回", upload: "添加文档", upload_send: "上传并导入",
    upload_done: "新增 {added} · 修订 {revised} · 未变 {unchanged} · 跳过 {skipped} · 拒收 {rejected} · 分块 {chunks}",
    upload_defaults: "采用了默认治理字段：{fields}", col_defaults: "默认字段",
    quarantine: "已隔离：下达指令的文本", col_signals: "信号", col_excerpt: "文本",
    keys: "API 密钥", key_name: "名称", key_roles: "角色，逗号分隔", key_operator: "运维",
    key_create: "创建密钥", key_secret: "新密钥（只显示这一次）：{secret}", col_name: "名称",
    col_roles: "角色", col_created: "创建时间", col_revoked: "吊销时间", revoke: "吊销",
    confirm_revoke: "吊销密钥 {name}？它将立即失效。", yes: "是", no: "否",
  },
};

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

function setupKey(onChange) {
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
      if (onChange) onChange();
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
  const response = await fetch(path, Object.assign({}, options || {}, { headers }));
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

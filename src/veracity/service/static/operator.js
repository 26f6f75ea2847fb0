// The operator page: the tenant's documents with their status, and a withdraw button that
// asks for confirmation first. Every request carries the operator's key; the server decides.
"use strict";

function notice(message) {
  const box = document.getElementById("notice");
  box.textContent = message || "";
  box.hidden = !message;
}

async function withdraw(row) {
  if (!window.confirm(t("confirm_withdraw", { id: row.id }))) return;
  try {
    await api(`/v1/documents/${encodeURIComponent(row.document_id)}/withdraw`, { method: "POST" });
    notice(t("withdrawn", { id: row.id }));
    await load();
  } catch (error) {
    showError(error.message);
  }
}

function documentRow(row) {
  const action = row.status === "active"
    ? el("button", { type: "button", class: "danger", "data-withdraw": row.id, onclick: () => withdraw(row) },
      t("withdraw"))
    : "";
  return el("tr", { "data-status": row.status, "data-id": row.id },
    el("td", {}, row.id), el("td", {}, row.title),
    el("td", {}, el("span", { class: "badge small", dataset: { status: row.status } }, t(`state_${row.status}`))),
    el("td", {}, row.visibility), el("td", {}, row.trust), el("td", {}, String(row.chunks)),
    el("td", {}, row.defaults || ""), el("td", {}, action));
}

async function load() {
  const table = document.getElementById("documents");
  table.replaceChildren();
  document.getElementById("summary").textContent = "";
  if (!storedKey()) return;
  try {
    const [listing, status] = await Promise.all([
      api("/v1/documents").then((r) => r.json()),
      api("/v1/status").then((r) => r.json()),
    ]);
    const columns = ["col_id", "col_title", "col_status", "col_visibility", "col_trust", "col_chunks",
      "col_defaults", "col_action"];
    table.append(el("thead", {}, el("tr", {}, ...columns.map((name) => el("th", {}, t(name))))),
      el("tbody", {}, ...listing.documents.map(documentRow)));
    const rate = status.cache.hit_rate === null ? "–" : `${Math.round(status.cache.hit_rate * 100)}%`;
    document.getElementById("summary").textContent =
      t("summary", { n: listing.documents.length, rate, version: status.index.version });
    showError("");
  } catch (error) {
    showError(error.status === 403 ? t("not_operator") : error.message);
  }
}

async function loadFeedback() {
  const table = document.getElementById("feedback-table");
  table.replaceChildren();
  if (!storedKey()) return;
  try {
    const { feedback } = await api("/v1/feedback?rating=down").then((r) => r.json());
    const columns = ["col_rated", "col_question", "col_status", "col_cited", "col_comment"];
    table.append(el("thead", {}, el("tr", {}, ...columns.map((name) => el("th", {}, t(name))))),
      el("tbody", {}, ...feedback.map((item) => el("tr", { "data-conversation": item.conversation_id },
        el("td", {}, item.rated_at), el("td", {}, item.question),
        el("td", {}, el("span", { class: "badge small", dataset: { status: item.status } },
          t(`status_${item.status}`))),
        el("td", {}, item.cited.map((c) => c.source_id).join(", ")), el("td", {}, item.comment)))));
  } catch (error) {
    if (error.status !== 403) showError(error.message);
  }
}

function table(id, columns, rows) {
  document.getElementById(id).replaceChildren(
    el("thead", {}, el("tr", {}, ...columns.map((name) => el("th", {}, t(name))))), el("tbody", {}, ...rows));
}

async function loadQuarantine() {
  if (!storedKey()) return;
  try {
    const { chunks } = await api("/v1/quarantine").then((r) => r.json());
    table("quarantine-table", ["col_id", "col_trust", "col_signals", "col_excerpt"], chunks.map((c) =>
      el("tr", { "data-id": c.id }, el("td", {}, c.id), el("td", {}, c.trust), el("td", {}, c.signals.join(", ")),
        el("td", {}, c.excerpt))));
  } catch (error) {
    if (error.status !== 403) showError(error.message);
  }
}

async function revokeKey(key) {
  if (!window.confirm(t("confirm_revoke", { name: key.name }))) return;
  try {
    await api(`/v1/keys/${encodeURIComponent(key.key_id)}/revoke`, { method: "POST" });
    await loadKeys();
  } catch (error) {
    showError(error.message);
  }
}

async function loadKeys() {
  if (!storedKey()) return;
  try {
    const found = (await api("/v1/keys").then((r) => r.json())).keys;
    table("keys-table", ["col_name", "col_roles", "key_operator", "col_created", "col_revoked", "col_action"],
      found.map((key) => el("tr", { "data-key": key.key_id }, el("td", {}, key.name), el("td", {}, key.roles.join(", ")),
        el("td", {}, key.operator ? t("yes") : t("no")), el("td", {}, key.created_at), el("td", {}, key.revoked_at || ""),
        el("td", {}, key.revoked_at ? "" : el("button", { type: "button", class: "danger", "data-revoke": key.key_id,
          onclick: () => revokeKey(key) }, t("revoke"))))));
  } catch (error) {
    if (error.status !== 403) showError(error.message);
  }
}

async function createKey(event) {
  event.preventDefault();
  const roles = document.getElementById("key-roles").value.split(",").map((r) => r.trim()).filter(Boolean);
  const body = { roles, operator: document.getElementById("key-operator").checked };
  const name = document.getElementById("key-name").value.trim();
  if (name) body.name = name;
  try {
    const made = await api("/v1/keys", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    }).then((r) => r.json());
    const shown = document.getElementById("key-secret");
    shown.textContent = t("key_secret", { secret: made.secret });  // once: it is not stored, only its digest
    shown.hidden = false;
    showError("");
    await loadKeys();
  } catch (error) {
    showError(error.message);
  }
}

async function upload(event) {
  event.preventDefault();
  const files = document.getElementById("upload-files").files;
  if (!files.length) return;
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  const button = document.getElementById("upload-button");
  button.disabled = true;
  const box = document.getElementById("upload-report");
  try {
    const response = await fetch("/v1/documents", {
      method: "POST", headers: { Authorization: `Bearer ${storedKey()}` }, body: form,
    });
    const report = await response.json();
    if (!response.ok && !report.rejected) throw new Error(`${response.status}: ${report.detail || ""}`);
    const lines = [t("upload_done", { added: report.added.length, revised: report.revised.length,
      unchanged: report.unchanged.length, skipped: report.skipped.length, rejected: report.rejected.length,
      chunks: report.chunks })];
    const taken = Object.entries(report.defaults_taken || {}).map(([field, n]) => `${field} (${n})`);
    if (taken.length) lines.push(t("upload_defaults", { fields: taken.join(", ") }));
    for (const item of [...report.skipped, ...report.rejected]) lines.push(`${item.file}: ${item.reason}`);
    box.replaceChildren(...lines.map((line) => el("div", {}, line)));
    box.hidden = false;
    box.dataset.done = "true";
    showError("");
    await load();
  } catch (error) {
    showError(error.message);
  } finally {
    button.disabled = false;
  }
}

function loadAll() {
  load();
  loadFeedback();
  loadQuarantine();
  loadKeys();
}

document.getElementById("upload-form").addEventListener("submit", upload);
document.getElementById("key-create").addEventListener("submit", createKey);
document.getElementById("refresh").addEventListener("click", () => { notice(""); loadAll(); });
setupKey(loadAll);
loadAll();

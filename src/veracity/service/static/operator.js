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
    el("td", {}, action));
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
      "col_action"];
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

document.getElementById("refresh").addEventListener("click", () => { notice(""); load(); loadFeedback(); });
setupKey(() => { load(); loadFeedback(); });
load();
loadFeedback();

// The question page: asks in a conversation (/v1/conversations: a follow-up is resolved against
// the turn before, and the page shows how it was asked), or, with Explain, streams one answer
// from /v1/ask/stream (server-sent events read with fetch, so the key travels in the
// Authorization header); shows the status badge with its reasons, the claims with numbered
// citations, opens a cited chunk in its document, and takes 👍/👎 with a comment on a turn.
"use strict";

const state = {
  claims: [], citations: new Map(), lastAsked: null, conversation: null, turn: null, reasons: [],
  explained: null, resolvedQuestion: null, resolvedVersion: "", defaults: {},
};

function statusLabel(status) {
  return t(`status_${status}`);
}

function reasonText(item) {
  return language() === "zh" ? item.zh : item.en;
}

function resetAnswer() {
  state.claims = [];
  state.citations = new Map();
  for (const id of ["reasons", "claims", "citations"]) document.getElementById(id).replaceChildren();
  document.getElementById("sources-title").hidden = true;
  document.getElementById("cache").textContent = "";
  document.getElementById("context").hidden = true;
  document.getElementById("explain-panel").hidden = true;
  document.getElementById("resolved").hidden = true;
  state.reasons = [];
  state.explained = null;
  state.resolvedQuestion = null;
  state.cache = null;
  document.getElementById("feedback").hidden = true;
  document.getElementById("feedback-form").hidden = true;
  document.getElementById("feedback-done").hidden = true;
  lockFeedback(false);
  const badge = document.getElementById("badge");
  badge.dataset.status = "pending";
  badge.textContent = t("status_pending");
  document.getElementById("answer").hidden = false;
}

function citationButton(number) {
  return el("button", {
    type: "button", class: "cite", "data-citation": number,
    "aria-label": `citation ${number}`, onclick: () => openCitation(number),
  }, `[${number}]`);
}

function onStatus(data) {
  const badge = document.getElementById("badge");
  badge.dataset.status = data.status;
  badge.textContent = statusLabel(data.status);
  document.getElementById("cache").textContent = data.cache === "hit" ? t("cache_hit") : t("cache_miss");
  state.reasons = data.reason_words;
  state.cache = data.cache;
  showReasons();
}

function showReasons() {
  const reasons = document.getElementById("reasons");
  reasons.replaceChildren(...state.reasons.map((item) => el("li", { dataset: { code: item.code } },
    reasonText(item))));
}

// A language switch words again what the page wrote itself: the badge, the reasons, the cache
// line, the question as asked, the sources' places, the explain table, the history's badges.
function relabel() {
  const badge = document.getElementById("badge");
  if (badge.dataset.status) badge.textContent = statusLabel(badge.dataset.status);
  if (state.cache) {
    document.getElementById("cache").textContent = state.cache === "hit" ? t("cache_hit") : t("cache_miss");
  }
  showReasons();
  if (state.resolvedQuestion) document.getElementById("resolved").textContent = askedAs();
  for (const node of document.querySelectorAll("#citations .where")) {
    node.textContent = where(state.citations.get(Number(node.dataset.citation)));
  }
  for (const node of document.querySelectorAll("#history .badge")) node.textContent = statusLabel(node.dataset.status);
  if (state.explained) onExplain(state.explained);
  if (state.context) document.getElementById("context-where").textContent = contextWhere(state.context);
  placeholders();
}

async function placeholders() {
  // the version and date hints come from what this key may see, not from the demo
  const version = document.getElementById("version");
  const asOf = document.getElementById("as-of");
  asOf.placeholder = t("as_of_hint", { date: new Date().toISOString().slice(0, 10) });
  if (!storedKey()) { version.placeholder = ""; return; }
  try {
    if (!state.versions) {
      const { documents, defaults } = await api("/v1/documents").then((r) => r.json());
      const named = documents.map((d) => d.versions).filter((v) => v && v !== "all");
      state.versions = [...new Set(named.map((v) => v.split(/[–\s]/)[0]))].sort().reverse().slice(0, 2);
      state.defaults = defaults || {};
    }
    // a tenant may record the version and moment its asks take when none is given: say which
    const { version: usual, as_of: moment } = state.defaults;
    if (usual) version.placeholder = t("version_default", { version: usual });
    else version.placeholder = state.versions.length ? t("version_hint", { versions: state.versions.join(" · ") }) : "";
    if (moment) asOf.placeholder = t("as_of_default", { date: moment.slice(0, 16).replace("T", " ") });
  } catch (_) { /* the hint is a courtesy: a key that cannot list documents gets none */ }
}

function onClaim(claim) {
  state.claims.push(claim);
  const text = claim.text.replace(/^(?:[-*+]|\d+[.)])\s+/, "");
  const parts = textParts(text);
  const shown = parts.map((part) => part.table ? tableOf(part.table, [])
    : el("span", { class: "claim-text" }, part.text));
  document.getElementById("claims").append(
    el("li", { class: "claim" }, ...shown, " ", ...claim.citations.map(citationButton)));
}

function where(citation) {
  const parts = [citation.heading_path.join(" › ") || citation.title];
  const pages = pageWords(citation.page_start, citation.page_end);
  if (pages) parts.push(pages);
  const versions = versionWords(citation.version_range);
  if (versions) parts.push(versions);
  return parts.join(" · ");
}

function onCitation(citation) {
  state.citations.set(citation.id, citation);
  document.getElementById("sources-title").hidden = false;
  document.getElementById("citations").append(
    el("li", { class: "citation", value: citation.id },
      el("button", { type: "button", class: "source", "data-citation": citation.id,
        onclick: () => openCitation(citation.id) },
        el("strong", {}, citation.title || citation.source_id), el("br"),
        el("span", { class: "muted where", "data-citation": citation.id }, where(citation))),
      // a page of a website source: a link to the cited heading on the page itself
      ...(citation.url && /^https?:\/\//.test(citation.url)
        ? [el("br"), el("a", { class: "source-link", href: citation.url, target: "_blank",
            rel: "noopener noreferrer" }, citation.url)]
        : [])));
}

function cell(value) {
  return el("td", {}, value === null || value === undefined ? "" : String(value));
}

function onExplain(data) {
  const table = document.getElementById("explain-table");
  const channels = [...new Set(data.candidates.flatMap((c) => Object.keys(c.ranks)))].sort();
  state.explained = data;
  const head = el("tr", {}, el("th", {}, "#"), ...["col_source", "col_heading", "col_page"].map((name) =>
    el("th", {}, t(name))), ...channels.map((name) => el("th", {}, name)),
    ...["col_fused", "col_reranked", "col_gate"].map((name) => el("th", {}, t(name))));
  const rows = data.candidates.map((c) => el("tr", {},
    cell(c.position), cell(c.path || c.source_id), cell(c.heading_path.join(" › ")), cell(c.pages),
    ...channels.map((name) => cell(c.ranks[name])),
    cell(c.fused === null ? "" : c.fused.toFixed(4)), cell(c.reranked === null ? "" : c.reranked.toFixed(4)),
    cell(c.outcome)));
  table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...rows));
  document.getElementById("decision").textContent = JSON.stringify(data.decision, null, 2);
  document.getElementById("explain-panel").hidden = false;
}

function highlighted(text, spans) {
  const nodes = [];
  let at = 0;
  for (const [start, end] of spans) {
    nodes.push(text.slice(at, start), el("mark", {}, text.slice(start, end)));
    at = end;
  }
  nodes.push(text.slice(at));
  return nodes;
}

function chunkBlock(chunk, cited) {
  return el("div", { class: cited ? "chunk cited" : "chunk neighbour", "data-chunk-id": chunk.chunk_id },
    el("div", { class: "chunk-head muted" }, [chunk.heading_path.join(" › "),
      pageWords(chunk.page_start, chunk.page_end)].filter(Boolean).join(" · ")),
    ...textParts(chunk.text).map((part) => {
      const spans = cited ? chunk.highlights : [];
      if (part.table) return tableOf(part.table, spans);
      const local = spans.map(([s, e]) => [Math.max(s - part.start, 0), Math.min(e - part.start, part.text.length)])
        .filter(([s, e]) => s < e);
      return el("p", {}, ...highlighted(part.text, local));
    }));
}

async function showPage(data) {
  // the cited region on the page itself: the original page as a picture, the chunk's boxes drawn
  // over it (their corners are fractions of the page, so they fit whatever size it is shown at)
  const view = document.getElementById("page-view");
  view.hidden = true;
  delete view.dataset.loaded;  // set again once this citation's picture has loaded
  view.replaceChildren();
  if (state.pageUrl) URL.revokeObjectURL(state.pageUrl);
  state.pageUrl = null;
  const boxes = data.chunk.boxes || [];
  if (!boxes.length) return;
  const page = boxes[0].page;
  try {
    const asOf = state.lastAsked && state.lastAsked.as_of;
    const query = asOf ? `?${new URLSearchParams({ as_of: asOf })}` : "";
    const blob = await api(`/v1/documents/${encodeURIComponent(data.document_id)}/pages/${page}.png${query}`)
      .then((r) => r.blob());
    state.pageUrl = URL.createObjectURL(blob);
    const image = el("img", { src: state.pageUrl, alt: `${data.title} · ${pageWords(page, page)}` });
    const marks = boxes.filter((b) => b.page === page).map((b) => el("div", {
      class: "box", style: `left:${b.x0 * 100}%;top:${b.top * 100}%;width:${(b.x1 - b.x0) * 100}%;` +
        `height:${(b.bottom - b.top) * 100}%`,
    }));
    view.append(image, ...marks);
    image.addEventListener("load", () => { view.dataset.loaded = "true"; });
    view.hidden = false;
  } catch (_) { /* no picture (turned off, or the file is gone): the text above still shows the quote */ }
}

function contextWhere(data) {
  const bits = [data.path || data.id, t("revision_short", { n: data.revision }), data.chunk.heading_path.join(" › "),
    pageWords(data.chunk.page_start, data.chunk.page_end)];
  return bits.filter(Boolean).join(" · ");
}

async function openCitation(number) {
  const citation = state.citations.get(number);
  if (!citation) return;
  const claim = state.claims.find((c) => c.citations.includes(number));
  const params = new URLSearchParams({ around: "1" });
  if (claim) params.set("quote", claim.text);
  const asOf = state.lastAsked && state.lastAsked.as_of;
  if (asOf) params.set("as_of", asOf);
  const path = `/v1/documents/${encodeURIComponent(citation.document_id)}/chunks/` +
    `${encodeURIComponent(citation.chunk_id)}?${params}`;
  try {
    const data = await (await api(path)).json();
    document.getElementById("context-title").textContent = `[${number}] ${data.title}`;
    state.context = data;
    document.getElementById("context-where").textContent = contextWhere(data);
    showPage(data);
    document.getElementById("context-chunks").replaceChildren(
      ...data.before.map((c) => chunkBlock(c, false)), chunkBlock(data.chunk, true),
      ...data.after.map((c) => chunkBlock(c, false)));
    const panel = document.getElementById("context");
    panel.hidden = false;
    panel.scrollIntoView({ block: "nearest" });
    showError("");
  } catch (error) {
    showError(error.message);
  }
}

function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  return { name, data: data.length ? JSON.parse(data.join("\n")) : null };
}

function onError(data) {
  // The stream ends after an error: no status is coming, so a pending badge ("Looking for
  // evidence…") must not stay on screen; an answer already shown stays, the error above it.
  const badge = document.getElementById("badge");
  if (badge.dataset.status === "pending") document.getElementById("answer").hidden = true;
  showError(`${data.status}: ${data.detail}`);
}

const HANDLERS = {
  status: onStatus, claim: onClaim, citation: onCitation, explain: onExplain, error: onError,
  resolved: onResolved, turn: onTurn, reset: onReset,
};

function remember(question, status) {
  // the turn just answered joins the conversation's history once the next one is asked
  state.pending = el("li", { dataset: { status } }, el("span", {}, question), " ",
    el("span", { class: "badge small", dataset: { status } }, statusLabel(status)));
}

function onResolved(data) {
  // the question as the conversation asks it: shown when it leaned on the turn before
  if (state.pending) {
    document.getElementById("history").append(state.pending);
    document.getElementById("history-panel").hidden = false;
    state.pending = null;
  }
  state.asking = data.resolved_question;
  state.resolvedQuestion = null;
  if (data.carried && Object.keys(data.carried).length) {
    state.resolvedQuestion = data.resolved_question;
    state.resolvedVersion = data.version || "";
    const resolved = document.getElementById("resolved");
    resolved.textContent = askedAs();
    resolved.hidden = false;
  }
}

// A follow-up may carry a version ("那 3.2 呢？") that its question text does not show: say it.
function askedAs() {
  const question = state.resolvedQuestion;
  const version = state.resolvedVersion;
  return version ? t("asked_as_version", { question, version }) : t("asked_as", { question });
}

function onTurn(data) {
  state.turn = data.turn;
  document.getElementById("feedback").hidden = false;
  document.getElementById("new-conversation").hidden = false;
  remember(state.asking, document.getElementById("badge").dataset.status);
}

function onReset() {
  // what was streamed is not the answer after all (the model started over, or its claims did
  // not hold and the extractive answer stands): the final claims follow
  state.claims = [];
  state.citations = new Map();
  for (const id of ["claims", "citations"]) document.getElementById(id).replaceChildren();
  document.getElementById("sources-title").hidden = true;
}

async function conversationStream(asked) {
  if (!state.conversation) {
    const started = await api("/v1/conversations", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: asked.question }),
    }).then((r) => r.json());
    state.conversation = started.id;
  }
  const params = new URLSearchParams(Object.entries({ question: asked.question, version: asked.version,
    as_of: asked.as_of }).filter(([, value]) => value));
  return `/v1/conversations/${encodeURIComponent(state.conversation)}/ask/stream?${params}`;
}

async function readStream(path) {
  const response = await api(path, { headers: { Accept: "text/event-stream" } });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const { name, data } = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (HANDLERS[name]) HANDLERS[name](data);
    }
  }
}

// One rating per answer: once it is recorded the buttons are locked until the next answer, so a
// second click cannot turn a thumbs-down into a thumbs-up that carries the down's comment.
function lockFeedback(locked) {
  document.getElementById("feedback-up").disabled = locked;
  document.getElementById("feedback-down").disabled = locked;
  document.getElementById("feedback-send").disabled = locked;
}

async function sendFeedback(rating) {
  if (!state.conversation || !state.turn) return;
  const box = document.getElementById("feedback-comment");
  const comment = rating === "down" ? box.value.trim() : "";  // the comment says what was wrong
  try {
    await api(`/v1/conversations/${encodeURIComponent(state.conversation)}/turns/${state.turn}/feedback`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify(comment ? { rating, comment } : { rating }),
    });
    document.getElementById("feedback-form").hidden = true;
    document.getElementById("feedback-done").hidden = false;
    box.value = "";
    lockFeedback(true);
  } catch (error) {
    showError(error.message);
  }
}

function newConversation() {
  state.conversation = null;
  state.turn = null;
  state.pending = null;
  document.getElementById("history").replaceChildren();
  document.getElementById("history-panel").hidden = true;
  document.getElementById("new-conversation").hidden = true;
  document.getElementById("answer").hidden = true;
}

async function ask(event) {
  event.preventDefault();
  const question = document.getElementById("question").value.trim();
  if (!question) return;
  if (!storedKey()) { showError(t("key_none")); return; }
  const asked = {
    question,
    version: document.getElementById("version").value.trim(),
    as_of: document.getElementById("as-of").value.trim(),
    explain: document.getElementById("explain").checked ? "true" : "",
  };
  state.lastAsked = asked;
  const params = new URLSearchParams(Object.entries(asked).filter(([, value]) => value));
  showError("");
  resetAnswer();
  const button = document.getElementById("ask-button");
  button.disabled = true;
  try {
    // with Explain, one answer on its own; otherwise the next turn of the conversation
    await readStream(asked.explain ? `/v1/ask/stream?${params}` : await conversationStream(asked));
    document.getElementById("answer").dataset.done = "true";
  } catch (error) {
    document.getElementById("answer").hidden = true;
    showError(error.message);
  } finally {
    button.disabled = false;
  }
}

document.getElementById("ask-form").addEventListener("submit", ask);
document.getElementById("new-conversation").addEventListener("click", newConversation);
document.getElementById("feedback-up").addEventListener("click", () => sendFeedback("up"));
document.getElementById("feedback-down").addEventListener("click", () => {
  document.getElementById("feedback-form").hidden = false;
  document.getElementById("feedback-comment").focus();
});
document.getElementById("feedback-send").addEventListener("click", () => sendFeedback("down"));
document.getElementById("context-close").addEventListener("click", () => {
  document.getElementById("context").hidden = true;
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") document.getElementById("context").hidden = true;  // as its close button
});
// Another key (or none) is another asker: the conversation, the answer and the history on screen
// were the last key's, and nobody else may read or continue them.
setupKey(() => { state.versions = null; newConversation(); relabel(); }, relabel);
placeholders();

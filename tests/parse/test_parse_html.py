"""HTML to structure nodes: page chrome dropped, headings, lists, tables, code, fuzzing."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veracity.model.contracts import ChunkKind
from veracity.model.errors import ValidationError
from veracity.parse.chunking import chunk_document
from veracity.parse.documents import make_document
from veracity.parse.html import parse_html
from veracity.parse.nodes import NodeKind
from veracity.parse.parsers import parse_text
from veracity.text.normalize import normalize_body

PAGE = """<!doctype html>
<html><head>
  <title>Starship 安装指南</title>
  <meta name="veracity:tenant" content="acme">
  <meta name="veracity:allowed_roles" content="support, admin">
  <style>body { color: red }</style>
  <script>var nav = "菜单";</script>
</head>
<body>
  <nav><ul><li>首页</li><li>文档</li></ul></nav>
  <header><a href="/">Starship</a><h1>站点标题</h1></header>
  <main>
    <article>
      <header><h1>安装指南</h1></header>
      <p>开始之前请阅读本页。<br>第二行&amp;更多。</p>
      <aside>相关文章</aside>
      <h2>系统要求</h2>
      <table>
        <caption>各计划的登录方式</caption>
        <thead><tr><th>计划</th><th>单点登录</th></tr></thead>
        <tbody>
          <tr><td>Team</td><td>OIDC</td></tr>
          <tr><td>Enterprise</td><td>SAML | OIDC</td></tr>
        </tbody>
      </table>
      <ol><li>下载安装包<ul><li>64 位</li></ul></li><li>运行安装程序</li></ol>
      <h2>命令</h2>
      <pre><code class="language-bash">pip install starship
starship --version</code></pre>
      <p># 这不是标题</p>
      <form><input name="q"><button>搜索</button></form>
    </article>
  </main>
  <footer>© 2026 Starship</footer>
  <noscript>请启用脚本</noscript>
</body></html>
"""


def test_page_chrome_scripts_and_forms_are_dropped() -> None:
    body = parse_html(PAGE).body
    for dropped in ("首页", "站点标题", "相关文章", "© 2026", "请启用脚本", "菜单", "color", "搜索"):
        assert dropped not in body


def test_cookie_and_consent_banners_are_dropped() -> None:
    page = """<body><div id="cookie-banner"><p>We use cookies to improve this site.</p><a>Accept</a></div>
    <main><h1>Cookies in requests</h1><p>Pass cookies with the cookies argument.</p></main>
    <section class="cc_consent notice"><p>Manage your consent preferences.</p></section>
    <div class="gdpr-notice"><p>Your privacy matters.</p></div></body>"""
    body = parse_html(page).body
    assert "Pass cookies with the cookies argument." in body and "Cookies in requests" in body
    for dropped in ("improve this site", "consent preferences", "privacy matters"):
        assert dropped not in body


def test_headings_lists_code_and_title(consistent: Callable[..., None]) -> None:
    parsed = parse_html(PAGE)
    assert parsed.title == "Starship 安装指南"
    headings = [(n.level, n.heading_path) for n in parsed.nodes if n.kind is NodeKind.HEADING]
    assert headings == [(1, ("安装指南",)), (2, ("安装指南", "系统要求")), (2, ("安装指南", "命令"))]
    listing = next(n for n in parsed.nodes if n.kind is NodeKind.LIST)
    assert listing.text == "1. 下载安装包\n    - 64 位\n2. 运行安装程序"
    code = next(n for n in parsed.nodes if n.kind is NodeKind.CODE)
    assert code.text == "```bash\npip install starship\nstarship --version\n```"
    assert code.heading_path == ("安装指南", "命令")
    assert "开始之前请阅读本页。\n第二行&更多。" in parsed.body
    assert "\\# 这不是标题" in parsed.body
    consistent(parsed)


def test_table_keeps_header_with_every_cell() -> None:
    parsed = parse_html(PAGE)
    table = next(n for n in parsed.nodes if n.kind is NodeKind.TABLE)
    assert table.header == ("计划", "单点登录")
    assert table.cells() == (
        (("计划", "Team"), ("单点登录", "OIDC")),
        (("计划", "Enterprise"), ("单点登录", "SAML | OIDC")),
    )
    assert table.text.splitlines()[0] == "| 计划 | 单点登录 |"
    assert "| Enterprise | SAML \\| OIDC |" in table.text
    caption = parsed.nodes[parsed.nodes.index(table) - 1]
    assert caption.kind is NodeKind.PARAGRAPH and caption.text == "各计划的登录方式"


def test_table_without_th_uses_its_first_row_as_header() -> None:
    parsed = parse_html("<table><tr><td>键</td><td>值</td></tr><tr><td>a</td><td>1</td></tr></table>")
    (table,) = parsed.nodes
    assert table.header == ("键", "值") and table.rows == (("a", "1"),)


def test_meta_tags_supply_metadata() -> None:
    assert parse_html(PAGE).metadata == {"tenant": "acme", "allowed_roles": ["support", "admin"]}


def test_structural_chunks_keep_the_table_whole_with_its_heading_path() -> None:
    parsed = parse_html(PAGE)
    metadata = {
        "id": "page", "revision": "1", "title": "t", "tenant": "acme", "valid_from": "2026-01-01",
        "status": "active", "visibility": "public", "trust": "official",
    }
    chunks = chunk_document(make_document(metadata, parsed.body), "structural", size=60)
    table = next(n for n in parsed.nodes if n.kind is NodeKind.TABLE)
    (holder,) = [c for c in chunks if c.start <= table.start < c.end]
    assert holder.kind is ChunkKind.TABLE and holder.text == table.text
    assert holder.heading_path == ("安装指南", "系统要求")


def test_malformed_html_still_parses(consistent: Callable[..., None]) -> None:
    parsed = parse_html("<p>一<p>二<li>三<li>四</ul></table><td>孤立</td><h3>标题<p>正文")
    assert "一" in parsed.body and "四" in parsed.body and "孤立" in parsed.body
    consistent(parsed)


def test_page_with_only_chrome_is_empty() -> None:
    try:
        parse_text("<nav>menu</nav><script>x()</script>", "html", source="chrome.html")
    except ValidationError as exc:
        assert "chrome.html" in str(exc) and "no text" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected an error")


_TAGS = ["p", "div", "h1", "h2", "h4", "ul", "ol", "li", "table", "tr", "td", "th", "thead",
         "caption", "pre", "code", "br", "nav", "script", "header", "article", "span", "b"]
_HTML_PIECES = st.one_of(
    st.sampled_from(_TAGS).map(lambda tag: f"<{tag}>"),
    st.sampled_from(_TAGS).map(lambda tag: f"</{tag}>"),
    st.sampled_from(["<br/>", "<p hidden>", '<div role="navigation">', '<pre class="language-py">',
                     "&amp;", "&lt;div&gt;", "<!-- c -->", "<![CDATA[x]]>", "<!doctype html>",
                     "# ", "- ", "1. ", "| ", "```", "~~~", "\n", "\n\n", " ", "\t", "\u3000",
                     "\u2028", "\x0b", "\x1f", "\r", "中文", "text", "`", "\\", "#", "e\u0301"]),
    st.text(max_size=5),
)


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(text=st.lists(_HTML_PIECES, max_size=50).map("".join))
def test_fuzz_html_never_crashes_offsets_slice_back_and_chunker_agrees(
    text: str, consistent: Callable[..., None]
) -> None:
    try:
        parsed = parse_html(text)
    except ValidationError:
        return
    assert normalize_body(parsed.body) == parsed.body
    consistent(parsed)

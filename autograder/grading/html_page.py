"""What the harness's HTML views share: the page around a view's body, the column it is read in, the
style of its tables, and how text is escaped (a notebook's fragment, ``self_check``, takes the escaping alone)."""

from __future__ import annotations

import re
from html import escape  # plain escaping, the standard library's: the views take it from here with the rest

# Tables with a line under each row, as the class's reports show them.
TABLE_STYLE = (
    "table{border-collapse:collapse;margin:.5rem 0} td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;"
    "text-align:left}"
)


def escape_with_code(text: str) -> str:
    """HTML-escaped text with `names` in backticks shown as code."""
    return re.sub(r"`([^`<>]+)`", r"<code>\1</code>", escape(text))


def page_html(title: str, style: str, body: str, *, width: str) -> str:
    """A self-contained page: ``title`` and ``body`` are HTML (their text escaped by the caller), ``style``
    the view's own rules, after those of the page's one column, at most ``width`` wide, in the middle."""
    column = f"body{{font-family:system-ui,sans-serif;max-width:{width};margin:2rem auto;padding:0 1rem;color:#222}}"
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
        f"<style>\n{column}\n{style}</style></head><body>{body}</body></html>\n"
    )

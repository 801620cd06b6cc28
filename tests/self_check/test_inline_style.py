"""The self-check cell's styles reach only its own output, and its card brings its own colours (readable in
a dark theme: the browser test measures it in JupyterLab's)."""

import re

from autograder.self_check.cell_output import SELECTOR, STYLE, SelfCheckReport, self_check_html


def _rules(css: str) -> list[tuple[list[str], str]]:
    return [
        ([s.strip() for s in re.split(r",(?![^()]*\))", selectors)], body)
        for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)
    ]


def test_every_rule_is_scoped_to_the_checks_wrapper():
    rules = _rules(STYLE)
    assert len(rules) > 10
    for selectors, _ in rules:
        for selector in selectors:
            assert selector == SELECTOR or selector.startswith(SELECTOR + " "), selector


def test_the_card_sets_its_foreground_and_background():
    (card,) = [body for selectors, body in _rules(STYLE) if selectors == [SELECTOR]]
    assert re.search(r"(^|;)color:#", card) and re.search(r"(^|;)background:#", card)
    for element in ("code", "pre"):
        (body,) = [b for s, b in _rules(STYLE) if s == [f"{SELECTOR} {element}"]]
        assert "color:#222 !important" in body and "background:#" in body, element


def test_the_output_is_one_wrapper_div_with_its_style():
    html = self_check_html(SelfCheckReport("lab2_three_ways", problem="no devices"))
    assert re.fullmatch(r"<style>[^<]*</style><div class='autograder-check'[^>]*>.*</div>", html, re.S)

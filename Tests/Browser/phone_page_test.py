"""The page on a phone and for a screen reader (issue 28 §4), run by menu_page_test.py's main():
at 1280, 768, 641, 390 and 320 CSS px nothing runs past the window nor scrolls sideways, the search box is usable, every column
header sits over its column, and developer details stay out of view; axe-core finds no
violation in any of the page's states (first load, collapsed, deep, search open, no match,
another language, each width, a server that went away). A long dish name is shown whole over two
lines on a phone. Saves a screenshot of each state and width."""
import json
import os
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from accessibility import axe_version, axe_violations
from menu_page_test import OUT, Server, expect_dom_matches_api, loaded, open_fresh_page, session_of, wait

WIDTHS = [1280, 768, 641, 390, 320]


def columns(driver):
    """Each header cell shown, with its box and the boxes of that column's cells in the rows shown."""
    return driver.execute_script("""
        const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };
        const shown = (e) => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().width > 0;
        return [...document.querySelectorAll('.row.head .cell')].filter(shown).map((head) => {
            const name = [...head.classList].find((c) => c !== 'cell');
            const cells = [...document.querySelectorAll(`#spacer > .row:not(.placeholder) .cell.${name}`)].filter(shown);
            return {name, head: box(head), cells: cells.slice(0, 12).map(box)};
        });""")


def expect_layout(driver, width):
    """Nothing wider than the window; a usable search box; every shown header over its cells."""
    overflow = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert overflow[0] <= overflow[1], f"{width} px: the page is {overflow[0]} px wide"
    # The header stands outside the scrolled rows: a grid that scrolled sideways would move the
    # cells from under it.
    grid = driver.execute_script("const v = document.getElementById('viewport'); return [v.scrollWidth, v.clientWidth]")
    assert grid[0] <= grid[1], f"{width} px: the rows are {grid[0]} px wide in a grid of {grid[1]} px"
    box = driver.find_element(By.ID, "search-box").rect
    assert box["width"] >= 150, f"{width} px: a search box {box['width']} px wide"
    assert not driver.find_element(By.ID, "reveal-form").is_displayed(), "the reveal-by-id box is a developer's tool"
    footer = driver.find_element(By.ID, "footer").text
    assert "version" not in footer and "session" not in footer, footer
    shown = columns(driver)
    assert shown and shown[0]["name"] == "name", shown
    for column in shown:
        left, right = column["head"]
        assert column["cells"], f"{width} px: no {column['name']} cells under its header"
        for cell in column["cells"]:
            # The same track of the same grid: the header's column is the cells' column, to a pixel.
            # On a phone a dish's name runs on across the row, over the price on its line below.
            wider = width <= 640 and column["name"] == "name" and cell[1] > right
            assert abs(cell[0] - left) <= 1 and (wider or abs(cell[1] - right) <= 1), \
                f"{width} px: the {column['name']} header at {left:.0f}-{right:.0f} px, a cell at {cell[0]:.0f}-{cell[1]:.0f} px"
    return [c["name"] for c in shown]


def expect_accessible(driver, state):
    violations = axe_violations(driver)
    driver.save_screenshot(os.path.join(OUT, f"a11y-{state}.png"))
    assert not violations, f"axe in state {state}: {violations}"


def test_phone(driver, server):
    try:
        for width in WIDTHS:
            driver.set_window_size(width, 800)
            open_fresh_page(driver, server)
            wait(driver, lambda d: d.find_element(By.ID, "grid").get_attribute("class").find("dishes") >= 0, "dishes")
            names = expect_layout(driver, width)
            expect_accessible(driver, f"first-load-{width}")
            print(f"browser-test: {width} px: headers {names} over their cells, axe {axe_version(driver)} clean")
        # The states, at a phone's width.
        driver.set_window_size(390, 800)
        open_fresh_page(driver, server)
        driver.find_element(By.ID, "collapse-all").click()
        wait(driver, lambda d: int(d.find_element(By.ID, "grid").get_attribute("aria-rowcount")) == 4, "collapse all")
        expect_accessible(driver, "collapsed")
        driver.find_element(By.ID, "expand-all").click()
        wait(driver, lambda d: int(d.find_element(By.ID, "grid").get_attribute("aria-rowcount")) == 31, "expand all")
        driver.execute_script("const v = document.getElementById('viewport'); v.scrollTop = v.scrollHeight")
        wait(driver, lambda d: (rows := loaded(d)) and rows[-1]["index"] == 29, "the last rows")
        expect_dom_matches_api(driver, server)
        expect_layout(driver, 390)
        expect_accessible(driver, "deep")
        box = driver.find_element(By.ID, "search-box")
        box.click()
        box.send_keys("tofu")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#search-results li")) >= 2, "matches listed")
        expect_accessible(driver, "search-open")
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys("zzzz")
        wait(driver, lambda d: d.find_element(By.ID, "search-note").text != "", "the no-match note")
        expect_accessible(driver, "no-match")
        box.send_keys(Keys.ESCAPE)
        driver.execute_script("const s = document.getElementById('language'); s.value = 'zh-Hant'; s.dispatchEvent(new Event('change'))")
        wait(driver, lambda d: d.execute_script("return document.documentElement.lang") == "zh-Hant" and
             d.title == "川菜館", "the menu in traditional Chinese")
        time.sleep(0.3)
        # The page's own words follow the menu's language, each marked with its language; the
        # English names beside the titles say they are English.
        words = driver.execute_script("""
            const text = (id) => { const e = document.getElementById(id); return [e.textContent.trim(), e.lang]; };
            return {expand: text('expand-all'), collapse: text('collapse-all'), search: [document.querySelector('label[for=search-box]').textContent, document.querySelector('label[for=search-box]').lang],
                    header: [...document.querySelectorAll('.row.head .cell')].map((e) => [e.textContent, e.lang]),
                    english: [...document.querySelectorAll('#spacer .subtitle')].map((e) => e.lang),
                    unlabelled: [...document.querySelectorAll('button, label, [role=columnheader]')].filter((e) => /[A-Za-z]{3}/.test(e.textContent) && !e.closest('[lang=en]')).map((e) => e.textContent)};""")
        footer = driver.find_element(By.ID, "footer").text
        assert footer == "30 列", f"the footer in traditional Chinese: {footer}"
        assert words["expand"] == ["全部展開", "zh-Hant"] and words["collapse"] == ["全部收合", "zh-Hant"], words
        assert words["search"] == ["搜尋", "zh-Hant"] and words["header"][:2] == [["名稱", "zh-Hant"], ["價格", "zh-Hant"]], words
        assert words["english"] and all(lang == "en" for lang in words["english"]), words
        assert not words["unlabelled"], f"English words read as Chinese: {words['unlabelled']}"
        expect_accessible(driver, "another-language")
        driver.execute_script("const s = document.getElementById('language'); s.value = ''; s.dispatchEvent(new Event('change'))")
    finally:
        driver.set_window_size(1200, 800)


LONG_TITLE = "乾燒岩鯉配板栗"  # 7 CJK characters
LONG_ENGLISH = "Dry-braised rock carp with chestnuts"  # 36 Latin: cut short on one line before


def test_long_names_and_a_lost_server(driver):
    """At 390 and 320 px a dish whose name takes two lines shows all of it, inside its row; then,
    with the server gone, a write's failure reads as words for a customer and axe finds nothing."""
    config = os.path.join(OUT, "long-names.json")
    with open(config, "w") as target:
        json.dump({"title": "Long names", "items": [{"id": "fish", "title": "Fish", "expanded": True, "items": [
            {"id": "carp", "title": LONG_TITLE, "attributes": {"en": LONG_ENGLISH, "price": 168, "currency": "CNY", "spicy": 2}},
            {"id": "rice", "title": "米飯", "attributes": {"en": "Rice", "price": 3, "currency": "CNY"}}]}]}, target)
    server = Server(config)
    try:
        for width in [390, 320]:
            driver.set_window_size(width, 800)
            open_fresh_page(driver, server)
            wait(driver, lambda d: d.find_element(By.ID, "grid").get_attribute("class").find("dishes") >= 0, "dishes")
            shown = driver.execute_script("""
                const row = document.querySelector('#spacer > .row[data-id=carp]');
                const next = document.querySelector('#spacer > .row[data-id=rice]');
                const label = row.querySelector('.label');
                const box = (e) => e.getBoundingClientRect();
                return {text: label.textContent, scroll: label.scrollHeight, client: label.clientHeight,
                        lines: Math.round(box(label).height / parseFloat(getComputedStyle(label).lineHeight)),
                        labelBottom: box(label).bottom, rowBottom: box(row).bottom, nextTop: box(next).top,
                        marksBottom: Math.max(...[...row.querySelectorAll('.cell')].map((c) => box(c).bottom))};""")
            assert shown["text"] == LONG_TITLE + " " + LONG_ENGLISH, shown
            assert shown["lines"] == 2, f"{width} px: the long name takes {shown['lines']} lines: {shown}"
            assert shown["scroll"] <= shown["client"] + 1, f"{width} px: the long name is cut: {shown}"
            assert shown["marksBottom"] <= shown["rowBottom"] + 0.5 <= shown["nextTop"] + 1, f"{width} px: {shown}"
            expect_layout(driver, width)
            driver.save_screenshot(os.path.join(OUT, f"long-name-{width}.png"))
        print(f"browser-test: a {len(LONG_TITLE) + 1 + len(LONG_ENGLISH)}-character name shown whole over two lines at 390 and 320 px")
        server.stop()
        driver.find_element(By.ID, "collapse-all").click()
        wait(driver, lambda d: d.find_element(By.ID, "status").text != "", "the failed write explained")
        status = driver.find_element(By.ID, "status").text
        assert "fetch" not in status.lower() and "error" not in status.lower(), status
        expect_accessible(driver, "server-gone")
        print(f"browser-test: the server gone: \"{status}\", axe clean")
    finally:
        server.stop()
        driver.set_window_size(1200, 800)


def focused(driver):
    """The focused element: what it is, and whether its focus shows (an outline or a ring)."""
    return driver.execute_script("""
        const e = document.activeElement, s = getComputedStyle(e);
        return {id: e.id || e.dataset.id || e.tagName, role: e.getAttribute('role') || e.tagName.toLowerCase(),
                shows: (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none'};""")


def test_keyboard_alone(driver, server):
    """Tab reaches every control and one row of the grid, each with a visible focus, in the
    order they stand; Enter and Space work them; arrows and Enter work the tree."""
    driver.set_window_size(1280, 800)
    open_fresh_page(driver, server)
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    stops = []
    for _ in range(12):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        stop = focused(driver)
        if stops and stop["id"] == stops[0]["id"]:
            break
        stops.append(stop)
        if stop["role"] == "row":
            break
    order = [stop["id"] for stop in stops]
    assert order[:5] == ["expand-all", "collapse-all", "new-session", "search-box", "language"], order
    assert stops[-1]["role"] == "row", order
    hidden = [stop["id"] for stop in stops if not stop["shows"]]
    assert not hidden, f"focus not visible on {hidden}"
    # Back to the first button: Enter collapses everything, Space expands it again.
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(*[Keys.TAB] * (len(stops) - 2)).key_up(Keys.SHIFT).perform()
    assert focused(driver)["id"] == "collapse-all", focused(driver)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, lambda d: int(d.find_element(By.ID, "grid").get_attribute("aria-rowcount")) == 4, "collapsed by Enter")
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).send_keys(Keys.SPACE).perform()
    wait(driver, lambda d: int(d.find_element(By.ID, "grid").get_attribute("aria-rowcount")) == 31, "expanded by Space")
    # Into the grid: its row takes the focus; Enter closes the group under it.
    ActionChains(driver).send_keys(*[Keys.TAB] * (len(stops) - 1)).perform()
    row = focused(driver)
    assert row["role"] == "row" and row["shows"], row
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait(driver, lambda d: d.execute_script("return document.activeElement.getAttribute('aria-expanded')") == "false",
         "the focused group closed by Enter")
    print(f"browser-test: keyboard alone: {' → '.join(order[:-1])} → a row, each focus visible; Enter and Space work them")


def checked(driver, node_id):
    return driver.execute_script(
        f"const e = document.querySelector('#spacer > .row[data-id=\"{node_id}\"] .check'); "
        "return e ? e.getAttribute('aria-checked') : null")


def test_selection(driver, server):
    """A group's checkbox chooses every leaf under it, shown or not; a leaf's clears one and the
    groups above show mixed; Space works the focused row's; the page agrees with the API, and
    axe-core finds nothing in that state."""
    driver.set_window_size(1280, 800)
    try:
        open_fresh_page(driver, server)
        beer = driver.find_element(By.CSS_SELECTOR, '#spacer > .row[data-id="beer"] .twisty')
        beer.click()  # collapse beer: its leaves are not rows any more
        wait(driver, lambda d: d.execute_script(
            "return document.querySelector('#spacer > .row[data-id=\"beer\"]').getAttribute('aria-expanded')") == "false",
            "beer collapsed")
        driver.find_element(By.CSS_SELECTOR, '#spacer > .row[data-id="beer"] .check').click()
        wait(driver, lambda d: checked(d, "beer") == "true" and checked(d, "drinks") == "mixed",
             "beer chosen while collapsed, drinks mixed")
        driver.find_element(By.CSS_SELECTOR, '#spacer > .row[data-id="beer"] .twisty').click()
        wait(driver, lambda d: checked(d, "snow-beer") == "true", "its leaves shown chosen once opened")
        driver.find_element(By.CSS_SELECTOR, '#spacer > .row[data-id="snow-beer"] .check').click()
        wait(driver, lambda d: checked(d, "snow-beer") == "false" and checked(d, "beer") == "mixed", "one cleared")
        expect_dom_matches_api(driver, server)
        # The keyboard: Space on the focused row chooses it again.
        row = driver.find_element(By.CSS_SELECTOR, '#spacer > .row[data-id="snow-beer"]')
        driver.execute_script("arguments[0].focus()", row)
        ActionChains(driver).send_keys(Keys.SPACE).perform()
        wait(driver, lambda d: checked(d, "snow-beer") == "true" and checked(d, "beer") == "true", "Space chose it")
        rows, _ = expect_dom_matches_api(driver, server)
        _, _, selection = server.call("GET", "/selection", session_of(driver))
        assert selection["selected"] == ["snow-beer", "tsingtao-beer", "chongqing-beer"], selection
        expect_accessible(driver, "selection")
        driver.set_window_size(390, 800)
        expect_layout(driver, 390)
        expect_accessible(driver, "selection-390")
        print(f"browser-test: selection: a collapsed group chosen, one leaf cleared (mixed), Space; axe clean")
    finally:
        driver.set_window_size(1200, 800)


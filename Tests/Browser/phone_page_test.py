"""The page on a phone and for a screen reader (issue 28 §4), run by menu_page_test.py's main():
at 1280, 390 and 320 CSS px nothing runs past the window, the search box is usable, every column
header sits over its column, and developer details stay out of view; axe-core finds no
violation in any of the page's states (first load, collapsed, deep, search open, no match,
another language, each width). Saves a screenshot of each state and width."""
import os
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from accessibility import axe_version, axe_violations
from menu_page_test import OUT, expect_dom_matches_api, loaded, open_fresh_page, wait

WIDTHS = [1280, 390, 320]


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
            assert abs(cell[0] - left) <= 1 and abs(cell[1] - right) <= 1, \
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
        assert words["expand"] == ["全部展開", "zh-Hant"] and words["collapse"] == ["全部收合", "zh-Hant"], words
        assert words["search"] == ["搜尋", "zh-Hant"] and words["header"][:2] == [["名稱", "zh-Hant"], ["價格", "zh-Hant"]], words
        assert words["english"] and all(lang == "en" for lang in words["english"]), words
        assert not words["unlabelled"], f"English words read as Chinese: {words['unlabelled']}"
        expect_accessible(driver, "another-language")
        driver.execute_script("const s = document.getElementById('language'); s.value = ''; s.dispatchEvent(new Event('change'))")
    finally:
        driver.set_window_size(1200, 800)

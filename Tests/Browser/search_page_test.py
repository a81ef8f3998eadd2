"""The browser page's search box and language choice (Web/search.js), run by menu_page_test.py's main().

Each check compares what the page shows with what the API answers for the page's own session and
language: the matches listed are /search's, the focused row after a reveal is the match, and the
titles in another language are that language's /rows.
"""

import os
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from menu_page_test import OUT, browser, expect_dom_matches_api, expanded_flag, loaded, row_element, session_of, wait


def listed(driver):
    """The matches the listbox shows: id, title, the path as read, selected; [] while it is hidden."""
    return driver.execute_script("""
        const list = document.getElementById('search-results');
        if (document.getElementById('search-panel').hidden) return [];
        return [...list.querySelectorAll('[role=option]')].map(e => ({
            id: e.dataset.id, title: e.querySelector('.title').textContent, path: e.textContent,
            selected: e.getAttribute('aria-selected') === 'true'}));""")


def page_language(driver):
    """The language the page's titles are in: the last answer's Content-Language, kept as the document's lang."""
    return driver.execute_script("return document.documentElement.lang")


def expect_listed_matches_api(driver, server, query):
    """Waits for the list of `query`'s matches; they are /search's for the page's session and language."""
    shown = wait(driver, lambda d: listed(d) and d.find_element(By.ID, "search-box").get_attribute("value") == query and listed(d),
                 f"the matches for {query}")
    status, _, answer = server.call("GET", f"/search?q={urllib.parse.quote(query)}&limit=20", session_of(driver),
                                    headers={"Accept-Language": page_language(driver)})
    assert status == 200, answer
    want = [(m["id"], m["title"], " › ".join([a["title"] for a in m["path"]] + [m["title"]])) for m in answer["matches"]]
    assert [(m["id"], m["title"], m["path"]) for m in shown] == want, (shown, want)
    return shown, answer


def test_search(driver, server):
    driver.get(server.url + "/")
    driver.execute_script("localStorage.clear()")
    driver.get(server.url + "/")
    wait(driver, loaded, "the rows in view to load")
    box = driver.find_element(By.ID, "search-box")
    assert box.get_attribute("role") == "combobox" and box.get_attribute("aria-controls") == "search-results"
    assert driver.find_element(By.CSS_SELECTOR, "label[for=search-box]").text == "Search"
    assert driver.find_element(By.ID, "search-results").get_attribute("role") == "listbox"

    # A hidden match: close 酒水 (drinks), then find its beers.
    row_element(driver, "drinks").find_element(By.CSS_SELECTOR, ".twisty").click()
    wait(driver, lambda d: expanded_flag(d, "drinks") == "false", "drinks to collapse")
    box.click()
    box.send_keys("啤酒")
    shown, answer = expect_listed_matches_api(driver, server, "啤酒")
    assert len(shown) >= 3 and shown[0]["selected"] and all(m["index"] is None for m in answer["matches"]), answer
    driver.save_screenshot(os.path.join(OUT, "search-hidden.png"))

    # ↓ twice and Enter: the third match is revealed, its row focused, the list closed.
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)
    wait(driver, lambda d: listed(d)[2]["selected"], "the third match selected")
    assert box.get_attribute("aria-activedescendant") == "match-2"
    chosen = shown[2]["id"]
    box.send_keys(Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == chosen, f"{chosen} revealed and focused")
    assert not listed(driver) and box.get_attribute("aria-expanded") == "false"
    assert expanded_flag(driver, "drinks") == "true"
    expect_dom_matches_api(driver, server)

    # Escape closes the list and empties the box; clearing the text closes it too.
    box.click()
    box.send_keys("豆腐")
    expect_listed_matches_api(driver, server, "豆腐")
    box.send_keys(Keys.ESCAPE)
    wait(driver, lambda d: not listed(d), "Escape to close the list")
    assert box.get_attribute("value") == ""
    box.send_keys("豆腐")
    expect_listed_matches_api(driver, server, "豆腐")
    box.send_keys(Keys.BACKSPACE, Keys.BACKSPACE)
    wait(driver, lambda d: not listed(d), "an empty box to close the list")

    # A click on a match reveals it; typed and Enter at once (before the debounce) takes the first.
    box.send_keys("麻婆")
    shown, _ = expect_listed_matches_api(driver, server, "麻婆")
    driver.find_element(By.CSS_SELECTOR, f'#search-results [data-id="{shown[0]["id"]}"]').click()
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == shown[0]["id"], "the clicked match focused")
    box.click()
    box.send_keys("青島", Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == "tsingtao-beer", "the first match of 青島 focused")
    expect_dom_matches_api(driver, server)

    # An English query on a page from the top: docs/menu-search.png is this screenshot.
    driver.get(server.url + "/")
    wait(driver, loaded, "the rows in view to load")
    box = driver.find_element(By.ID, "search-box")
    box.click()
    box.send_keys("tofu")
    shown, _ = expect_listed_matches_api(driver, server, "tofu")
    box.send_keys(Keys.ARROW_DOWN)
    wait(driver, lambda d: len(listed(d)) > 1 and listed(d)[1]["selected"], "the second match selected")
    driver.save_screenshot(os.path.join(OUT, "search.png"))
    print(f"browser-test: search listed /search's matches; {chosen} revealed and focused; tofu: {[m['path'] for m in shown]}")


def content_language(server, headers):
    _, answer_headers, _ = server.call("GET", "/count", headers=headers)
    return answer_headers.get("Content-Language")


def shown_titles(driver):
    return {row["id"]: row["title"] for row in (loaded(driver) or [])}


def test_language(server):
    """A browser set to simplified Chinese gets those titles, in the grid and in the matches; a
    language chosen with the select (kept in localStorage) goes as ?lang= and wins over the browser's."""
    if content_language(server, {"Accept-Language": "zh-Hans"}) != "zh-Hans":
        raise AssertionError("the menu has no zh-Hans titles (Config/menu.json without locales?)")
    driver = browser(language="zh-Hans")
    try:
        driver.get(server.url + "/")
        driver.execute_script("localStorage.clear()")
        driver.get(server.url + "/")
        rows, _ = expect_dom_matches_api(driver, server)
        assert page_language(driver) == "zh-Hans"
        titles = {row["id"]: row["title"] for row in rows}
        _, _, traditional = server.call("GET", f"/rows?limit={len(rows)}", headers={"Accept-Language": "zh-Hant"})
        assert titles["kung-pao-chicken"] == "宫保鸡丁" and \
            {row["id"]: row["title"] for row in traditional["rows"]}["kung-pao-chicken"] == "宮保雞丁", titles
        # Searched in traditional characters, the matches are listed in the page's simplified ones.
        box = driver.find_element(By.ID, "search-box")
        box.click()
        box.send_keys("雞")
        shown, _ = expect_listed_matches_api(driver, server, "雞")
        assert shown and shown[0]["title"] == "宫保鸡丁", shown
        assert driver.find_element(By.ID, "language").is_displayed()
        driver.save_screenshot(os.path.join(OUT, "language.png"))
        box.send_keys(Keys.ESCAPE)

        # English with the select: every request carries ?lang=en, a reload too (localStorage).
        driver.execute_script("const s = document.getElementById('language'); s.value = 'en'; s.dispatchEvent(new Event('change'))")
        _, _, english = server.call("GET", f"/rows?limit={len(rows)}", headers={"Accept-Language": "en"})
        want = {row["id"]: row["title"] for row in english["rows"]}
        wait(driver, lambda d: (shown := shown_titles(d)) and all(shown[i] == want[i] for i in shown if i in want), "English titles")
        driver.refresh()
        wait(driver, lambda d: (shown := shown_titles(d)) and all(shown[i] == want[i] for i in shown if i in want), "English after a reload")
        assert driver.execute_script("return localStorage.getItem('menu-server.language')") == "en"
        assert driver.find_element(By.ID, "language").get_attribute("value") == "en" and page_language(driver) == "en"
        expect_dom_matches_api(driver, server)
        # Back to the browser's language.
        driver.execute_script("const s = document.getElementById('language'); s.value = ''; s.dispatchEvent(new Event('change'))")
        wait(driver, lambda d: (shown := shown_titles(d)) and all(shown[i] == titles[i] for i in shown if i in titles), "simplified again")
        assert driver.execute_script("return localStorage.getItem('menu-server.language')") is None
        print(f"browser-test: zh-Hans browser {titles['kung-pao-chicken']}, ?lang=en {want['kung-pao-chicken']}, 雞 listed {shown[0]['path']}")
    finally:
        driver.quit()
